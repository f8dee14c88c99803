import Type, { type Static } from 'typebox';

/**
 * The before-send hook (README, "Before-send hook"): one URL per application that a node asks,
 * synchronously and signed like a webhook, about each message before it is stored. This file holds
 * what the control service (which sets hooks) and the nodes (which call them) share.
 */

/** The `type` of the body a hook receives. */
export const BEFORE_SEND_EVENT = 'message.before_send';

/** What happens to a send when its hook fails (timeout, non-2xx, unreadable answer, refused address). */
export type BeforeSendPolicy = 'open' | 'closed';

export const BEFORE_SEND_LIMITS = Object.freeze({
  /** How long a node waits for the hook's answer, in ms: at least, at most, and when not given. */
  minTimeoutMs: 50,
  maxTimeoutMs: 2000,
  defaultTimeoutMs: 500,
  defaultPolicy: 'open' as BeforeSendPolicy,
  /** Longest `reason` of a rejection (it is shown to the sender). */
  reasonChars: 500,
});

/**
 * The hook's answer: a 2xx with one of these JSON bodies (other fields are ignored). Anything else
 * is a failure of the hook, and the application's policy decides.
 */
export const BeforeSendAnswer = Type.Union(
  [
    Type.Object({ action: Type.Literal('allow') }, { description: 'Store the message as sent.' }),
    Type.Object(
      { action: Type.Literal('reject'), reason: Type.Optional(Type.String({ minLength: 1, maxLength: BEFORE_SEND_LIMITS.reasonChars })) },
      { description: 'Store nothing; the sender gets MESSAGE_REJECTED with `reason` as its detail.' },
    ),
    Type.Object(
      { action: Type.Literal('replace'), content: Type.String({ description: "Must pass the rules of a send's content (1 to the message length limit)" }) },
      { description: 'Store (and deliver) `content` instead of what was sent.' },
    ),
  ],
  { description: "A before-send hook's answer" },
);
export type BeforeSendAnswer = Static<typeof BeforeSendAnswer>;
