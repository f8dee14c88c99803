/**
 * Chats: one actor per chat (the single writer of its messages and members on this node), the
 * operations the HTTP routes and the realtime gateway call (ChatService, which runs each where
 * its chat is held), the events a chat publishes, and the schemas of what the API returns.
 *
 * Guarantees the rest of the node relies on: a chat's seqs are assigned once each, without gaps,
 * by its actor; a write is acknowledged only once it is durable; its event goes to the EventSink
 * after that, per chat in seq order.
 */
export { ActorRegistry } from './registry.ts';
export { SerialQueue } from './serial-queue.ts';
export type { ChatActor, SendInput, SendResult } from './actor.ts';
export { CHAT_LIST, CHAT_OPS, ChatService, PAGE, runHere, type ChatOpArgs, type ChatOpName, type ChatOpResult, type ChatRouter, type ChatServiceOptions, type ChatSummary, type Principal } from './service.ts';
export type { LocalChatOps } from './local-ops.ts';
export { ChatCap } from './chat-cap.ts';
export { AppActionBudget, UserWriteLimits } from './write-limits.ts';
export { SendAdmission, type SendAdmissionOptions } from './send-admission.ts';
export { CHAT_LIMITS } from './limits.ts';
export { REACTION_SUMMARY } from './reaction-summary.ts';
export { PinSchema, PinnedSchema, type PinnedView } from './chat-pins.ts';
export { boundedQueue, countedRefusals, type AdmissionPolicy } from './admission.ts';
export { chatEventSchemas, userEventSchemas, type ChatEvent, type EventSink, type ServerEvent, type UserEvent } from './events.ts';
export type { Replay, ReplayDelivery, ReplayTarget, ResumeEntry, ResumePoint } from './replay.ts';
export { ThreadStateSchema, type ThreadState } from './thread-follows.ts';
export { INBOX_PAGE, InboxSchema } from './thread-inbox.ts';
export { AttachmentIds, AttachmentSchema, Mentions, ChatSchema, Content, IdempotencyKey, MemberSchema, MessageSchema, MessageType, ReactionSchema, ReactionValue, ReplySchema, Role, SendContent, emptySendProblem } from './schemas.ts';
export { CUSTOM_DATA, CustomDataSchema, customDataProblem, storedData, type CustomData } from './custom-data.ts';
export { sendInputOf, type EditInput, type SendFields } from './send-input.ts';
export { madeMessageJson, messageJson } from './message-json.ts';
export type { ChatView, MemberView, MessageView, ReactionView, ReplyView } from './views.ts';
export { messageView } from './views.ts';
export { ChatBanSchema, MuteSchema, type Moderator } from './chat-moderation.ts';
export type { BeforeSendHook, BeforeSendPort } from './before-send-port.ts';
export type { AttachmentClaim, AttachmentLookup, AttachmentPort } from './attachment-port.ts';
export { changeWithEvents, type ChangeEventItem, type ChatWebhooks, type MessageWrite } from './change-events.ts';
export { FlagSchema, flagView, type FlagView } from './flag-views.ts';
