import Type, { type Static } from 'typebox';
import type { Config } from '../config/index.ts';

/**
 * An application's attachment settings as both services speak of them (README, "Attachments"):
 * the dashboard and the management API set them on the control service, which keeps them; every
 * node reads them (cached, dropped when a change is announced) when an upload is asked for and
 * when it is finalized. Each narrows what the deployment allows, never widens it: the node applies
 * the smaller of the application's figure and the deployment's, and refuses the types both refuse.
 */

/** Types never accepted, whatever a deployment or an application allows: scripts a browser would run, and executables. */
export const DEFAULT_REFUSED_TYPES: readonly string[] = [
  'image/svg+xml',
  'text/html',
  'application/xhtml+xml',
  'application/x-msdownload',
  'application/x-elf',
  'application/x-mach-binary',
  'application/x-sh',
  'application/vnd.android.package-archive',
  'application/x-msi',
  'application/x-apple-diskimage',
  'application/java-archive',
  'application/wasm',
];

/** At most this many entries in each list of types. */
export const ATTACHMENT_TYPE_PATTERNS_MAX = 50;

/** A MIME type, or every subtype of one: matched exactly, or by the part before '/' for `type/*`. */
export const TypePattern = Type.String({
  minLength: 3,
  maxLength: 127,
  pattern: '^[a-z0-9][a-z0-9!#$&^_.+-]*/(\\*|[a-z0-9][a-z0-9!#$&^_.+-]*)$',
  description: 'A MIME type (`application/pdf`) or every subtype of one (`image/*`), lower case, without parameters',
});

export const AttachmentSettingsBody = Type.Object(
  {
    maxFileBytes: Type.Optional(
      Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "Largest file, in bytes: at most the deployment's ATTACHMENT_MAX_BYTES (absent: that)" }),
    ),
    maxTotalBytes: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description: "Most attachment bytes the application may store (files and thumbnails): at most the deployment's ATTACHMENT_APP_MAX_TOTAL_BYTES when that is set (absent: that)",
      }),
    ),
    allowedTypes: Type.Optional(
      Type.Array(TypePattern, { minItems: 1, maxItems: ATTACHMENT_TYPE_PATTERNS_MAX, description: 'Only files of these types are accepted, as sniffed from their bytes (absent: any type not refused)' }),
    ),
    refusedTypes: Type.Optional(
      Type.Array(TypePattern, { maxItems: ATTACHMENT_TYPE_PATTERNS_MAX, description: 'Files of these types are refused, besides those the deployment always refuses (SVG, HTML, executables, ATTACHMENT_REFUSED_TYPES)' }),
    ),
  },
  { additionalProperties: false },
);
export type AttachmentSettings = Static<typeof AttachmentSettingsBody>;

/** What the deployment sets, as the service answering is configured: the ceilings and the types always refused. */
export const AttachmentDeploymentLimits = Type.Object({
  maxFileBytes: Type.Integer({ description: 'ATTACHMENT_MAX_BYTES' }),
  maxTotalBytes: Type.Integer({ description: 'ATTACHMENT_APP_MAX_TOTAL_BYTES (0: no limit)' }),
  refusedTypes: Type.Array(Type.String(), { description: 'The built-in refused types and ATTACHMENT_REFUSED_TYPES' }),
});
export type AttachmentDeploymentLimits = Static<typeof AttachmentDeploymentLimits>;

export const AttachmentSettingsView = Type.Object({
  settings: AttachmentSettingsBody,
  updatedAt: Type.Optional(Type.String({ format: 'date-time', description: 'When they were last set (absent: never)' })),
  deployment: AttachmentDeploymentLimits,
});
export type AttachmentSettingsView = Static<typeof AttachmentSettingsView>;

/** The deployment's limits as `config` sets them. */
export function deploymentLimits(config: Readonly<Pick<Config, 'ATTACHMENT_MAX_BYTES' | 'ATTACHMENT_APP_MAX_TOTAL_BYTES' | 'ATTACHMENT_REFUSED_TYPES'>>): AttachmentDeploymentLimits {
  const configured = config.ATTACHMENT_REFUSED_TYPES.split(',').map((t) => t.trim().toLowerCase()).filter((t) => t !== '');
  return { maxFileBytes: config.ATTACHMENT_MAX_BYTES, maxTotalBytes: config.ATTACHMENT_APP_MAX_TOTAL_BYTES, refusedTypes: [...new Set([...DEFAULT_REFUSED_TYPES, ...configured])] };
}

/** Whether `type` is one `patterns` names (linear in the patterns). */
export function typeMatches(patterns: readonly string[], type: string): boolean {
  const slash = type.indexOf('/');
  const family = slash < 0 ? type : type.slice(0, slash);
  for (const p of patterns) if (p === type || (p.endsWith('/*') && p.length === family.length + 2 && p.startsWith(family))) return true;
  return false;
}

/**
 * Why the application's settings go past what the deployment allows, one entry per field (the
 * error shape's `errors`), or none. A deployment's total of 0 means no limit, so any total fits.
 */
export function settingsProblems(s: AttachmentSettings, deployment: Pick<AttachmentDeploymentLimits, 'maxFileBytes' | 'maxTotalBytes'>): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  if (s.maxFileBytes !== undefined && s.maxFileBytes > deployment.maxFileBytes) {
    problems.push({ path: '/body/maxFileBytes', message: `must be at most ${deployment.maxFileBytes} (the deployment's ATTACHMENT_MAX_BYTES)` });
  }
  if (s.maxTotalBytes !== undefined && deployment.maxTotalBytes > 0 && s.maxTotalBytes > deployment.maxTotalBytes) {
    problems.push({ path: '/body/maxTotalBytes', message: `must be at most ${deployment.maxTotalBytes} (the deployment's ATTACHMENT_APP_MAX_TOTAL_BYTES)` });
  }
  return problems;
}
