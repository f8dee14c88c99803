import { ApiError } from '../../common/index.ts';
import { CachedReads } from '../../common/cache/index.ts';
import { typeMatches, type AttachmentDeploymentLimits, type AttachmentSettings } from '../../common/attachments/index.ts';

/** What one application's uploads must meet: its settings within the deployment's limits. */
export interface FileRule {
  /** Largest file, in bytes. */
  maxFileBytes: number;
  /** Most attachment bytes the application may store; 0: no limit. */
  maxTotalBytes: number;
  /** Only these types (patterns) are accepted; any when absent. */
  allowed?: readonly string[];
  /** These types (patterns) are refused: the deployment's and the application's. */
  refused: readonly string[];
}

/** Where an application's settings are read (the control store); undefined: never set. */
export type AttachmentSettingsSource = (appId: string) => Promise<AttachmentSettings | undefined>;

export interface FileRulesOptions {
  deployment: AttachmentDeploymentLimits;
  /** No source: every application has the deployment's rule. */
  source?: AttachmentSettingsSource;
  /** How long a read is trusted: bounds how late a change this node was not told of applies. */
  ttlMs: number;
  now?: () => number;
}

/** Applications whose rule a node keeps (about 300 bytes each); past this the oldest read is dropped. */
const MAX_CACHED = 10_000;

/** The rule that `settings` make of the deployment's limits: each figure the smaller, refusals added. */
export function ruleOf(deployment: AttachmentDeploymentLimits, settings: AttachmentSettings | undefined): FileRule {
  const total = settings?.maxTotalBytes;
  return {
    maxFileBytes: Math.min(deployment.maxFileBytes, settings?.maxFileBytes ?? Infinity),
    maxTotalBytes: total === undefined ? deployment.maxTotalBytes : deployment.maxTotalBytes === 0 ? total : Math.min(total, deployment.maxTotalBytes),
    ...(settings?.allowedTypes ? { allowed: settings.allowedTypes } : {}),
    refused: [...deployment.refusedTypes, ...(settings?.refusedTypes ?? [])],
  };
}

/** FILE_TYPE_REFUSED when `rule` does not accept `type`, naming `path`; undefined when it does. */
export function typeRefusal(rule: FileRule, type: string, path: string): ApiError | undefined {
  if (typeMatches(rule.refused, type)) return new ApiError('FILE_TYPE_REFUSED', `files of type ${type} are not accepted`, { errors: [{ path, message: `type ${type} is refused` }] });
  if (rule.allowed && !typeMatches(rule.allowed, type)) {
    return new ApiError('FILE_TYPE_REFUSED', `files of type ${type} are not accepted: this application accepts ${rule.allowed.join(', ')}`, {
      errors: [{ path, message: `type ${type} is not one of the application's allowedTypes` }],
    });
  }
  return undefined;
}

/** FILE_TOO_LARGE when `size` is over the rule's largest file. */
export function sizeRefusal(rule: FileRule, size: number): ApiError | undefined {
  if (size <= rule.maxFileBytes) return undefined;
  return new ApiError('FILE_TOO_LARGE', `a file may be at most ${rule.maxFileBytes} bytes`, { errors: [{ path: '/body/size', message: `must be at most ${rule.maxFileBytes}` }] });
}

/**
 * Each application's FileRule on this node: its settings read at most once per `ttlMs` and again
 * at once after `changed` (see CachedReads). When the source cannot answer, the rule last read
 * stands; with none, the caller gets BackendUnavailableError (503): an upload is never let
 * through on a guess.
 */
export class FileRules {
  private readonly reads: CachedReads<FileRule> | undefined;
  private readonly fallback: FileRule;

  constructor(o: FileRulesOptions) {
    this.fallback = ruleOf(o.deployment, undefined);
    const source = o.source;
    this.reads = source && new CachedReads(async (appId) => ruleOf(o.deployment, await source(appId)), { ttlMs: o.ttlMs, what: 'attachment settings', maxKeys: MAX_CACHED, ...(o.now ? { now: o.now } : {}) });
  }

  get(appId: string): FileRule | Promise<FileRule> {
    return this.reads ? this.reads.get(appId) : this.fallback;
  }

  /** Read again before the next use (a change here, or announced). */
  changed(appId: string): void {
    this.reads?.changed(appId);
  }
}
