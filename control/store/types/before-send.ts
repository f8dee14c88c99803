import type { BeforeSendPolicy } from '../../../common/webhooks/index.ts';

/** An application's before-send hook (README, "Before-send hook"): at most one per application. */
export interface BeforeSendHook {
  appId: string;
  url: string;
  /** How long a node waits for the answer (BEFORE_SEND_LIMITS: 50–2000 ms). */
  timeoutMs: number;
  /** What a send gets when the hook fails: stored as sent (`open`) or refused (`closed`). */
  failurePolicy: BeforeSendPolicy;
  /** The signing secret, `whsec_…`: kept readable, as signing needs it (as webhook secrets are). */
  secret: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The before-send hooks, one per application. `create` is atomic with the check that there is
 * none (of two concurrent creates exactly one wins), so a hook's secret is made once.
 */
export interface BeforeSendStore {
  get(appId: string): Promise<BeforeSendHook | undefined>;
  create(hook: BeforeSendHook): Promise<'created' | 'exists'>;
  /** Replaces the application's hook, if it has one. */
  update(hook: BeforeSendHook): Promise<'updated' | 'not-found'>;
  delete(appId: string): Promise<'deleted' | 'not-found'>;
}
