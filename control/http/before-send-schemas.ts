import Type from 'typebox';
import { BEFORE_SEND_LIMITS, MAX_WEBHOOK_URL } from '../../common/webhooks/index.ts';

/** Schemas of the before-send hook's management routes (README, "Before-send hook"). */
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });
const { minTimeoutMs, maxTimeoutMs, defaultTimeoutMs, defaultPolicy } = BEFORE_SEND_LIMITS;

const HookUrl = Type.String({ minLength: 1, maxLength: MAX_WEBHOOK_URL, description: 'https:// URL whose host resolves to public addresses, as for webhooks (WEBHOOK_ALLOW_INSECURE_URLS relaxes both).' });
const TimeoutMs = Type.Integer({ minimum: minTimeoutMs, maximum: maxTimeoutMs, description: `How long a node waits for the answer, ${minTimeoutMs}–${maxTimeoutMs} ms; ${defaultTimeoutMs} when not given.` });
const FailurePolicy = Type.Union([Type.Literal('open'), Type.Literal('closed')], {
  description: `When the hook times out, answers other than 2xx or with no valid verdict, or cannot be reached: \`open\` stores the message as sent, \`closed\` refuses it (BEFORE_SEND_FAILED). \`${defaultPolicy}\` when not given.`,
});

export const SetBeforeSendBody = Type.Object({ url: HookUrl, timeoutMs: Type.Optional(TimeoutMs), failurePolicy: Type.Optional(FailurePolicy) }, { additionalProperties: false });
export const BeforeSendHookView = Type.Object({ url: Type.String(), timeoutMs: Type.Integer(), failurePolicy: FailurePolicy, createdAt: Timestamp, updatedAt: Timestamp });
export const BeforeSendHookCreated = Type.Object({
  ...BeforeSendHookView.properties,
  secret: Type.String({ description: 'The signing secret (whsec_…): shown when the hook is first set, by the reveal call and on rotation.' }),
});
