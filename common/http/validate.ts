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
export function compileValidator(schema: TSchema, part: 'body' | 'params' | 'query'): Validator {
  const checker = Compile(schema);
  const convert = part !== 'body';
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
    const oversized = sizeProblems(rules as SizeRules, value, `/${part}`, []);
    if (oversized.length > 0) return failure(part, oversized);
    const errors: FieldProblem[] = [];
    for (const e of explain.Errors(value)) {
      // The additionalProperties walk reports once per key as "schema is false"; keep the clearer one.
      if (e.keyword === 'boolean') continue;
      errors.push({ path: `/${part}${e.instancePath}`, message: describe(e.keyword, e.message, e.params) });
      if (errors.length >= MAX_REPORTED) break;
    }
    return failure(part, errors);
  };
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
  const detail = first ? `${first.path || `/${part}`}: ${first.message}` : `${part} is invalid`;
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

function describe(keyword: string, message: string, params: unknown): string {
  if (keyword === 'additionalProperties' && params && typeof params === 'object' && 'additionalProperties' in params) {
    const extra = (params as { additionalProperties: unknown }).additionalProperties;
    return `unknown properties: ${Array.isArray(extra) ? extra.join(', ') : String(extra)}`;
  }
  if (keyword === 'required' && params && typeof params === 'object' && 'requiredProperties' in params) {
    const missing = (params as { requiredProperties: unknown }).requiredProperties;
    return `missing required properties: ${Array.isArray(missing) ? missing.join(', ') : String(missing)}`;
  }
  return message;
}
