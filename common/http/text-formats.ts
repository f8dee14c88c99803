import Type, { type TString } from 'typebox';
import Format from 'typebox/format';

/**
 * Text rules for untrusted names and addresses, as TypeBox formats checked by plain loops: each
 * check is one pass over the string (linear time, whatever it holds), where a regular expression
 * such as `^[^\s@]+@[^\s@]+\.[^\s@]+$` backtracks quadratically on `a@....@`. The validator checks
 * lengths before any format (see validate.ts), so a check never sees more than its schema's
 * maxLength.
 *
 * Refused in every such text: C0 and C1 control characters (NUL included), unpaired UTF-16
 * surrogates, the bidirectional embedding, override and isolate controls and marks (which make a
 * name display as something else), and the line and paragraph separators.
 */

/** Whether the code unit is refused in any name or address (see above). */
function refused(c: number): boolean {
  if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  if (c === 0x061c || c === 0x200e || c === 0x200f || c === 0x2028 || c === 0x2029) return true;
  return (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/** Whether the code unit at i is half of a surrogate pair missing its other half. */
function unpaired(value: string, i: number, c: number): boolean {
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = value.charCodeAt(i + 1);
    return !(next >= 0xdc00 && next <= 0xdfff);
  }
  if (c >= 0xdc00 && c <= 0xdfff) {
    const previous = i > 0 ? value.charCodeAt(i - 1) : 0;
    return !(previous >= 0xd800 && previous <= 0xdbff);
  }
  return false;
}

/** Safe display text: see the module comment; no leading or trailing whitespace. */
export function isDisplayText(value: string): boolean {
  if (value.length === 0) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (refused(c) || unpaired(value, i, c)) return false;
  }
  return value.trim().length === value.length;
}

const SPACE = /\s/;

/**
 * An e-mail address as accounts use it: one `@`; a local part of 1–64 characters; a domain of at
 * least two dot-separated labels of 1–63 characters; no whitespace and nothing refused above.
 */
export function isEmailAddress(value: string): boolean {
  if (value.length < 3 || value.length > 254) return false;
  const at = value.indexOf('@');
  if (at < 1 || at > 64 || value.indexOf('@', at + 1) !== -1) return false;
  let labels = 1;
  let label = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (refused(c) || unpaired(value, i, c) || SPACE.test(value[i]!)) return false;
    if (i <= at) continue;
    if (c === 0x2e) {
      if (label === 0) return false;
      labels++;
      label = 0;
    } else if (++label > 63) return false;
  }
  return labels >= 2 && label > 0;
}

Format.Set('display-text', isDisplayText);
Format.Set('email-address', isEmailAddress);

/** A name shown to people (display names, chat, company and application names). */
export function DisplayText(minLength: number, maxLength: number, options: { description?: string } = {}): TString {
  return Type.String({
    minLength,
    maxLength,
    format: 'display-text',
    description: options.description ?? `${minLength}–${maxLength} characters, no leading or trailing whitespace, no control, bidirectional-control or unpaired surrogate characters`,
  });
}

/** An account's e-mail address (see isEmailAddress). */
export function EmailAddress(options: { description?: string } = {}): TString {
  return Type.String({
    minLength: 3,
    maxLength: 254,
    format: 'email-address',
    description: options.description ?? 'E-mail address, 3–254 characters: one @, a local part of 1–64, a domain of dot-separated labels; compared case-insensitively.',
  });
}
