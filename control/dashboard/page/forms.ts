import { html } from 'htm/preact';
import { useCallback, useRef, useState } from 'preact/hooks';
import { ChatApiError, ChatNetworkError } from '../../../sdk/management.ts';

/**
 * Forms and their errors. An error is shown where it happened: a field the service named
 * (`errors[].path` of a VALIDATION_FAILED problem) gets its message under the field, tied to it with
 * aria-describedby and aria-invalid; anything else goes in the form's alert, just under its button.
 */

export interface Failure {
  /** What went wrong, for the form's alert. */
  message: string;
  /** Messages by field name (`/body/email` → `email`). */
  fields: Record<string, string>;
}

/** What each field accepts, said the way a person reads it (README, "Validation rules"). */
const FIELD_RULES: Record<string, string> = {
  email: 'Enter an e-mail address such as name@company.com.',
  password: 'Use 8 to 128 characters.',
  companyName: 'Use 1 to 100 characters, with no space at either end.',
  name: 'Use 1 to 64 characters, with no space at either end.',
  code: 'Enter the 6-digit code from your app, or a recovery code.',
  events: 'Choose at least one event.',
  description: 'Use 1 to 200 characters, with no space at either end, or leave it empty.',
};

const sentence = (text: string) => {
  const trimmed = text.trim();
  if (!trimmed) return trimmed;
  const first = trimmed[0]!.toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
};

/**
 * Problem codes a form knows to be about one of its fields (a wrong current password, a wrong
 * code), with what to say there.
 */
export type FieldCodes = Record<string, { field: string; message: string }>;

export const WRONG_CODE: FieldCodes = {
  MFA_CODE_INVALID: { field: 'code', message: 'That code is wrong, or was used already. Wait for the next code in your app and try again.' },
};
export const WRONG_PASSWORD: FieldCodes = { INVALID_CREDENTIALS: { field: 'currentPassword', message: 'Your current password is wrong.' } };

/** The form's alert when the problem is told under a field: said once, where it belongs. */
const FIELD_NAMED = 'Not done: see the message under the field marked above.';

/** Turns what a call threw into what the page says. */
export function describeFailure(error: unknown, codes: FieldCodes = {}): Failure {
  if (error instanceof ChatApiError) {
    const known = codes[error.code];
    if (known) return { message: FIELD_NAMED, fields: { [known.field]: known.message } };
    const fields: Record<string, string> = {};
    for (const { path, message } of error.problem.errors ?? []) {
      const name = path.split('/')[2];
      if (name && !fields[name]) fields[name] = FIELD_RULES[name] ?? sentence(message);
    }
    const named = Object.keys(fields).length > 0;
    const message = named ? FIELD_NAMED : sentence(error.problem.detail || error.problem.title);
    return { message: error.code === 'RATE_LIMITED' ? `${message} Wait a little and try again.` : message, fields };
  }
  if (error instanceof ChatNetworkError) return { message: 'The service cannot be reached. Check your connection and try again.', fields: {} };
  return { message: `Something went wrong: ${error instanceof Error ? error.message : String(error)}`, fields: {} };
}

/** Runs a form's action, tracking whether it is busy and what failed. */
export function useAction(codes?: FieldCodes) {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Failure | undefined>(undefined);
  const running = useRef(false);
  const run = useCallback(async (action: () => Promise<unknown>): Promise<boolean> => {
    if (running.current) return false;
    running.current = true;
    setBusy(true);
    setFailure(undefined);
    try {
      await action();
      return true;
    } catch (error) {
      setFailure(describeFailure(error, codes));
      return false;
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);
  return { busy, failure, run, clear: () => setFailure(undefined) };
}

/**
 * A form's texts: those of the stored value until the person types, then theirs. The stored texts
 * are derived in the render that shows the stored value, never set by an effect after it, so the
 * fields are never seen empty beside a loaded value (a reload showed "Last changed" over empty
 * fields for one frame).
 */
export function useDraft<T>(stored: T | undefined, empty: T): [T, (texts: T | undefined) => void] {
  const [typed, setTyped] = useState<T | undefined>(undefined);
  return [typed ?? stored ?? empty, setTyped];
}

/** The value of the input an event came from. */
export const valueOf = (event: Event) => (event.currentTarget as HTMLInputElement).value;

/** Calls `submit` instead of letting the browser submit the form. */
export const onSubmit = (submit: () => void) => (event: Event) => {
  event.preventDefault();
  submit();
};

let fieldIds = 0;

interface FieldProps {
  label: string;
  name: string;
  value: string;
  onValue: (value: string) => void;
  type?: string;
  autocomplete?: string;
  required?: boolean;
  hint?: string;
  failure?: Failure | undefined;
  inputmode?: string;
  minlength?: number;
  maxlength?: number;
}

/** A labelled input with its hint and the service's message about it, both announced with it. */
export function Field(props: FieldProps) {
  const id = useRef(`field-${++fieldIds}`).current;
  const error = props.failure?.fields[props.name];
  const described = [props.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`
    <div class="field">
      <label for=${id}>${props.label}</label>
      ${props.hint && html`<p class="hint" id=${`${id}-hint`}>${props.hint}</p>`}
      <input
        id=${id}
        name=${props.name}
        type=${props.type ?? 'text'}
        value=${props.value}
        onInput=${(e: Event) => props.onValue(valueOf(e))}
        autocomplete=${props.autocomplete}
        required=${props.required}
        inputmode=${props.inputmode}
        minlength=${props.minlength}
        maxlength=${props.maxlength}
        aria-invalid=${error ? 'true' : undefined}
        aria-describedby=${described || undefined}
      />
      ${error && html`<p class="field-error" id=${`${id}-error`}>${error}</p>`}
    </div>
  `;
}

/** The form-level message: an alert, so a screen reader says it when it appears. */
export function FormError({ failure }: { failure?: Failure | undefined }) {
  return html`<p class="form-error" role="alert">${failure?.message ?? ''}</p>`;
}

/** A message that something worked, announced politely. */
export function Notice({ text }: { text: string }) {
  return html`<p class="notice" role="status">${text}</p>`;
}
