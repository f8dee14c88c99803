import type { ApiError } from '../../common/index.ts';
import type { BeforeSendPolicy } from '../../common/webhooks/index.ts';
import type { StoredAttachment } from '../store/index.ts';
import type { SendInput } from './actor.ts';
import type { Principal } from './local-ops.ts';

/** An application's before-send hook as a node needs it (the control store's BeforeSendHook is one). */
export interface BeforeSendHook {
  url: string;
  timeoutMs: number;
  failurePolicy: BeforeSendPolicy;
  secret: string;
}

/**
 * What ChatService asks of the applications' before-send hooks (README, "Before-send hook"). Chat
 * declares the port, as it does EventSink; node/webhooks/before-send.ts implements it from above.
 */
export interface BeforeSendPort {
  /** The application's hook, or undefined without one: from a cache when known (a lookup), else once read. */
  hookOf(appId: string): BeforeSendHook | undefined | Promise<BeforeSendHook | undefined>;
  /**
   * What to store (the input, or the input with replaced content), or the sender's refusal. Never
   * throws. `files`: the metadata of the finalized uploads `input.attachments` names, in its order
   * (AttachmentPort.describe), for the hook to see what the message carries.
   */
  ask(hook: BeforeSendHook, p: Principal, chatId: string, input: SendInput, files?: readonly StoredAttachment[]): Promise<SendInput | ApiError>;
}
