import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { ApiError, type FieldProblem } from '../errors/index.ts';
import './text-formats.ts';

export type Validator = (value: unknown) => { value: unknown } | ApiError;

const MAX_REPORTED = 10;

/**
 * Compiles a schema once. Query strings and path parameters arrive as text, so for them values are
 * converted to the schema's types before checking, strictly: `"20"` becomes `20`, while `"1.5"`,
 * `"0x10"` or `"true"` for an integer stay text and fail the check. Bodies are checked as sent.
 */
export function compileValidator(schema: TSchema, part: 'body' | 'params' | 'query' | 'frame'): Validator {
  const checker = Compile(schema);
  const convert = part === 'params' || part === 'query';
  // A WebSocket frame's problems name its own fields (`/content`), in the transport's terms.
  const prefix = part === 'frame' ? '' : `/${part}`;
  const variants = discriminated(schema);
  return (input) => {
    const value = convert ? convertText(schema, input) : input;
    if (checker.Check(value)) return { value };
    // A union told apart by its `type` field: the problems are those of the variant the value
    // names (its fields), not "matches no variant".
    const variant = variants?.get((value as { type?: unknown } | null)?.type as string);
    const [rules, explain] = variant ? [variant.schema, variant.checker] : [schema, checker];
    // Sizes first: a value over its schema's length or count limit is reported as such, and no
    // pattern or format ever runs on it (the check above stops at the first failed rule; the error
    // walk below would evaluate every rule of every value).
    const oversized = sizeProblems(rules as SizeRules, value, prefix, []);
    if (oversized.length > 0) return failure(part, oversized);
    return failure(part, explainErrors(rules, explain.Errors(value), prefix));
  };
}

interface SchemaError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: unknown;
  message: string;
}

/**
 * The problems of a value, each naming its field, the rule, and the allowed values where there is
 * a list: a missing or unknown field is named itself (`/body/content: is required`, with the known
 * fields for an unknown one), a union of constants says `must be one of: "a", "b"`, a constant
 * `must be "a"`. At most MAX_REPORTED.
 */
function explainErrors(root: TSchema, found: Iterable<SchemaError>, prefix: string): FieldProblem[] {
  const out: FieldProblem[] = [];
  const push = (path: string, message: string) => {
    if (out.length < MAX_REPORTED && !out.some((p) => p.path === path && p.message === message)) out.push({ path, message });
  };
  for (const e of found) {
    const path = `${prefix}${e.instancePath}`;
    const params = (e.params ?? {}) as { requiredProperties?: unknown; additionalProperties?: unknown; allowedValue?: unknown };
    // The additionalProperties walk reports once per key as "schema is false"; the keyword below says it better.
    if (e.keyword === 'boolean') continue;
    if (e.keyword === 'required') {
      for (const name of [params.requiredProperties].flat()) push(`${path}/${String(name)}`, 'is required');
    } else if (e.keyword === 'additionalProperties') {
      const known = Object.keys((schemaAt(root, e.schemaPath) as { properties?: object } | undefined)?.properties ?? {});
      for (const name of [params.additionalProperties].flat()) push(`${path}/${String(name)}`, `is not a known field${known.length > 0 ? ` (known: ${known.join(', ')})` : ''}`);
    } else if (e.keyword === 'anyOf' || e.schemaPath.includes('/anyOf/')) {
      // A union, or a rule of one of its variants: said once, listing what the union allows (read
      // from the schema: the errors of a long union may have been cut short), when its variants
      // are simple (constants, formats, types); else each problem as found.
      const union = e.keyword === 'anyOf' ? e.schemaPath : e.schemaPath.slice(0, e.schemaPath.lastIndexOf('/anyOf/'));
      const allowed = variantsOf(schemaAt(root, union));
      if (allowed) push(path, `must be one of: ${allowed.join(', ')}`);
      else if (e.keyword === 'const') push(path, `must be ${JSON.stringify(params.allowedValue)}`);
      else if (e.keyword !== 'anyOf') push(path, e.message);
    } else if (e.keyword === 'const') {
      push(path, `must be ${JSON.stringify(params.allowedValue)}`);
    } else {
      push(path, e.message);
    }
  }
  return out;
}

/** What each variant of a union of simple variants allows, in words (undefined when one is not simple). */
export function variantsOf(schema: unknown): string[] | undefined {
  const anyOf = (schema as { anyOf?: unknown[] } | undefined)?.anyOf;
  if (!Array.isArray(anyOf)) return undefined;
  const out: string[] = [];
  for (const v of anyOf) {
    const s = (v ?? {}) as { const?: unknown; format?: unknown; type?: unknown; properties?: unknown };
    if ('const' in s) out.push(JSON.stringify(s.const));
    else if (typeof s.format === 'string') out.push(`a ${s.format}`);
    else if (typeof s.type === 'string' && s.type !== 'object' && s.type !== 'array') out.push(`a ${s.type}`);
    else return undefined;
  }
  return out;
}

/** The sub-schema at a schema path (`#/properties/a/anyOf/0`). */
function schemaAt(root: TSchema, schemaPath: string): unknown {
  let node: unknown = root;
  for (const step of schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    if (!node || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[step.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return node;
}

type Variants = Map<string, { schema: TSchema; checker: ReturnType<typeof Compile> }>;

/** For a union of objects each with a constant `type` property: each variant by that constant. */
function discriminated(schema: TSchema): Variants | undefined {
  const anyOf = (schema as { anyOf?: TSchema[] }).anyOf;
  if (!anyOf) return undefined;
  const variants: Variants = new Map();
  for (const v of anyOf) {
    const tag = (v as { properties?: { type?: { const?: unknown } } }).properties?.type?.const;
    if (typeof tag !== 'string') return undefined;
    variants.set(tag, { schema: v, checker: Compile(v) });
  }
  return variants;
}

function failure(part: string, errors: FieldProblem[]): ApiError {
  const first = errors[0];
  const detail = first ? `${first.path || (part === 'frame' ? 'the frame' : `/${part}`)}: ${first.message}` : `${part} is invalid`;
  return new ApiError('VALIDATION_FAILED', detail, { errors });
}

interface SizeRules {
  type?: unknown;
  maxLength?: number;
  maxItems?: number;
  properties?: Record<string, SizeRules>;
  items?: SizeRules;
}

/**
 * The strings longer than their schema's maxLength and arrays with more items than its maxItems,
 * through objects' declared properties and arrays' items: one pass over the value, no pattern.
 * Lengths are counted in UTF-16 units, which is never less than the code points the full check
 * counts, so a string this passes can still fail there (and is then at most twice the limit).
 */
function sizeProblems(schema: SizeRules, value: unknown, path: string, out: FieldProblem[]): FieldProblem[] {
  if (out.length >= MAX_REPORTED) return out;
  if (typeof value === 'string') {
    if (schema.maxLength !== undefined && value.length > 2 * schema.maxLength) {
      out.push({ path, message: `must not have more than ${schema.maxLength} characters` });
    }
  } else if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems) out.push({ path, message: `must not have more than ${schema.maxItems} items` });
    else if (schema.items) for (let i = 0; i < value.length; i++) sizeProblems(schema.items, value[i], `${path}/${i}`, out);
  } else if (value && typeof value === 'object' && schema.properties) {
    for (const [key, rules] of Object.entries(schema.properties)) {
      if (Object.hasOwn(value, key)) sizeProblems(rules, (value as Record<string, unknown>)[key], `${path}/${key}`, out);
    }
  }
  return out;
}

const textOf: Record<string, (text: string) => unknown> = {
  integer: (text) => (/^-?\d{1,15}$/.test(text) ? Number(text) : text),
  number: (text) => (/^-?\d{1,15}(\.\d{1,15})?$/.test(text) ? Number(text) : text),
  boolean: (text) => (text === 'true' ? true : text === 'false' ? false : text),
};

/** Converts the text values of a flat object (query, path parameters) to its properties' types. */
function convertText(schema: TSchema, input: unknown): unknown {
  if (!input || typeof input !== 'object') return input;
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const out: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const [key, value] of Object.entries(out)) {
    const type = properties[key]?.type;
    const convert = typeof type === 'string' ? textOf[type] : undefined;
    if (typeof value === 'string' && convert) out[key] = convert(value);
  }
  return out;
}
