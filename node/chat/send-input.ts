import { ApiError } from '../../common/index.ts';
import { customDataProblem, storedData, type CustomData } from './custom-data.ts';
import { emptySendProblem } from './schemas.ts';

/** A send as the chat's actor takes it. */
export interface SendInput {
  content: string;
  replyTo?: string;
  clientKey?: string;
  /** Upload ids of the files the message carries (1-CHAT_LIMITS.attachments, distinct). */
  attachments?: readonly string[];
  /** The application's own data (custom-data.ts), already checked. */
  data?: Record<string, unknown>;
  /** A system message: only the backend sends one, with its API key. */
  system?: boolean;
  /** Members the message mentions (1-CHAT_LIMITS.mentions, distinct), each checked to be a member. */
  mentions?: readonly string[];
  /** A reply: the message of the chat it answers, in whose thread it is stored (thread-replies.ts). */
  parentId?: string;
  /** A reply shown in the chat's timeline too (thread-replies.ts). */
  showInChat?: boolean;
}

/** A send's fields as both transports take them (a REST body, a WebSocket frame), past their schema. */
export interface SendFields {
  content: string;
  replyTo?: string | undefined;
  idempotencyKey?: string | undefined;
  attachments?: string[] | undefined;
  data?: CustomData | undefined;
  mentions?: string[] | undefined;
  parentId?: string | undefined;
  showInChat?: boolean | undefined;
}

/**
 * A send's input, or the first rule its fields break that a schema cannot say (content empty
 * without attachments, data too large or too deep), its path under `prefix` (`/body` for REST,
 * `` for a WebSocket frame). The one place both transports turn fields into a send.
 */
export function sendInputOf(fields: SendFields, prefix: string): SendInput | ApiError {
  const problem = emptySendProblem(fields, prefix) ?? customDataProblem(fields.data, `${prefix}/data`);
  if (problem) return problem;
  const input: SendInput = { content: fields.content };
  if (fields.replyTo !== undefined) input.replyTo = fields.replyTo;
  if (fields.attachments !== undefined) input.attachments = fields.attachments;
  if (fields.idempotencyKey !== undefined) input.clientKey = fields.idempotencyKey;
  if (fields.mentions !== undefined) input.mentions = fields.mentions;
  if (fields.parentId !== undefined) input.parentId = fields.parentId;
  if (fields.showInChat === true) {
    if (fields.parentId === undefined) return ApiError.field('VALIDATION_FAILED', `${prefix}/showInChat`, 'only a reply (with parentId) is shown in the chat too');
    input.showInChat = true;
  }
  const data = storedData(fields.data);
  if (data !== undefined) input.data = data;
  return input;
}

/** An edit's change: new content, new data, or both (at least one, checked by its schema's caller). */
export interface EditInput {
  content?: string;
  /** Replaces the message's data; `{}` removes it. */
  data?: CustomData;
}

/** A chat's change: a group's new name, new data (replacing the old; `{}` removes it), or both. */
export interface ChatChange {
  name?: string;
  data?: CustomData;
}
