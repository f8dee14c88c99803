/**
 * Compile-time check (run by `npm run typecheck`, part of `npm test`): the SDK's hand-written wire
 * types and the service's schemas describe the same payloads, both ways. If either side changes
 * alone, this file stops compiling. The same for the SDK's copies of the error and close code tables.
 */
import type { Static } from 'typebox';
import type * as Sdk from '../../sdk/types.ts';
import type * as SdkCodes from '../../sdk/codes.ts';
import type { errorCodes, RetryableCode } from '../../common/errors/codes.ts';
import type { closeCodes } from '../../node/realtime/protocol.ts';
import type { ChatSchema, MemberSchema, MessageSchema, ReactionSchema } from '../../node/chat/schemas.ts';
import type { ChatEvent as ServiceChatEvent, UserEvent as ServiceUserEvent } from '../../node/chat/events.ts';
import type { ChatBanSchema, MuteSchema } from '../../node/chat/chat-moderation.ts';
import type { FlagSchema } from '../../node/chat/flag-views.ts';
import type { ThreadStateSchema } from '../../node/chat/thread-follows.ts';
import type { InboxSchema } from '../../node/chat/thread-inbox.ts';
import type { Action as ModerationActionSchema } from '../../node/moderation/schemas.ts';
import type { ChatSummary as ServiceChatSummary, User as ServiceUser, UserSession as ServiceUserSession } from '../../node/http/schemas.ts';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const agree = <T extends true>(): T | undefined => undefined;

agree<Same<Sdk.Message, Static<typeof MessageSchema>>>();
agree<Same<Sdk.Reaction, Static<typeof ReactionSchema>>>();
agree<Same<Sdk.Chat, Static<typeof ChatSchema>>>();
agree<Same<Sdk.Member, Static<typeof MemberSchema>>>();
agree<Same<Sdk.ChatSummary, Static<typeof ServiceChatSummary>>>();
agree<Same<Sdk.User, Static<typeof ServiceUser>>>();
agree<Same<Required<Sdk.UserSession>, Static<typeof ServiceUserSession>>>();
agree<Same<Sdk.ChatEvent, ServiceChatEvent>>();
agree<Same<Sdk.UserEvent, ServiceUserEvent>>();
agree<Same<Sdk.Mute, Static<typeof MuteSchema>>>();
agree<Same<Sdk.ChatBan, Static<typeof ChatBanSchema>>>();
agree<Same<Sdk.Flag, Static<typeof FlagSchema>>>();
agree<Same<Sdk.ModerationAction, Static<typeof ModerationActionSchema>>>();

// The code tables: the SDK's copies list exactly the service's error codes and close codes (numbers included).
agree<Same<SdkCodes.ErrorCode, keyof typeof errorCodes>>();
agree<Same<(typeof SdkCodes.RETRYABLE_CODES)[number], RetryableCode>>();
agree<Same<typeof SdkCodes.CloseCode, { readonly [K in keyof typeof closeCodes]: (typeof closeCodes)[K]['code'] }>>();

// Threads: the caller's state and the inbox.
agree<Same<Sdk.ThreadState, Static<typeof ThreadStateSchema>>>();
agree<Same<Sdk.ThreadInbox, Static<typeof InboxSchema>>>();

// Push: a device, and an application's push settings as the management API shows them.
agree<Same<import('../../sdk/push-calls.ts').PushDevice, Static<typeof import('../../node/push/index.ts').PushDeviceView>>>();
agree<Same<import('../../sdk/management.ts').PushSettings, import('../../common/push/index.ts').PushSettingsView>>();
