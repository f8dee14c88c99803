import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { ApiError, type FieldProblem } from '../errors/index.ts';

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
  return (input) => {
    const value = convert ? convertText(schema, input) : input;
    if (checker.Check(value)) return { value };
    const errors: FieldProblem[] = [];
    for (const e of checker.Errors(value)) {
      // The additionalProperties walk reports once per key as "schema is false"; keep the clearer one.
      if (e.keyword === 'boolean') continue;
      errors.push({ path: `/${part}${e.instancePath}`, message: describe(e.keyword, e.message, e.params) });
      if (errors.length >= MAX_REPORTED) break;
    }
    const first = errors[0];
    const detail = first ? `${first.path || `/${part}`}: ${first.message}` : `${part} is invalid`;
    return new ApiError('VALIDATION_FAILED', detail, { errors });
  };
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
