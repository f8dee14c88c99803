import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ChatApiError } from '../../../../sdk/management.ts';
import { useLoaded, type AttachmentSettings, type AttachmentSettingsState, type Calls } from '../data.ts';
import { FormError, Notice, onSubmit, useAction, useDraft } from '../forms.ts';
import { When } from '../widgets.ts';

/**
 * The application's attachment settings (README, "Attachments"): its largest file and its total
 * storage, in MiB and GiB, and the types it accepts and refuses, one a line. Empty fields take the
 * deployment's values, shown beside them; saving replaces the whole setting. A value the service
 * refuses is said under its field, a type by its line.
 */

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

interface Texts {
  maxFile: string;
  maxTotal: string;
  allowed: string;
  refused: string;
}
type FieldName = keyof Texts;
const NO_TEXTS: Texts = { maxFile: '', maxTotal: '', allowed: '', refused: '' };

const number = (bytes: number, unit: number) => String(Math.round((bytes / unit) * 1000) / 1000);
const linesOf = (text: string) =>
  text
    .split('\n')
    .map((raw, i) => ({ text: raw.trim(), line: i + 1 }))
    .filter((l) => l.text.length > 0);

function textsOf(s: AttachmentSettings): Texts {
  return {
    maxFile: s.maxFileBytes === undefined ? '' : number(s.maxFileBytes, MIB),
    maxTotal: s.maxTotalBytes === undefined ? '' : number(s.maxTotalBytes, GIB),
    allowed: (s.allowedTypes ?? []).join('\n'),
    refused: (s.refusedTypes ?? []).join('\n'),
  };
}

/** The settings the fields say, or the field that says something that is no size. */
function settingsOf(texts: Texts): AttachmentSettings | { field: FieldName; message: string } {
  const size = (field: FieldName, text: string, unit: number) => {
    if (text.trim() === '') return undefined;
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0) return { field, message: 'Enter a number above 0, or leave it empty for the deployment’s value.' };
    return Math.max(1, Math.round(value * unit));
  };
  const maxFile = size('maxFile', texts.maxFile, MIB);
  if (typeof maxFile === 'object') return maxFile;
  const maxTotal = size('maxTotal', texts.maxTotal, GIB);
  if (typeof maxTotal === 'object') return maxTotal;
  const allowed = linesOf(texts.allowed).map((l) => l.text.toLowerCase());
  const refused = linesOf(texts.refused).map((l) => l.text.toLowerCase());
  return {
    ...(maxFile === undefined ? {} : { maxFileBytes: maxFile }),
    ...(maxTotal === undefined ? {} : { maxTotalBytes: maxTotal }),
    ...(allowed.length > 0 ? { allowedTypes: allowed } : {}),
    ...(refused.length > 0 ? { refusedTypes: refused } : {}),
  };
}

/** The service's complaints (`/body/<field>[/<i>]`) in the panel's words, by field. */
function fieldErrors(error: ChatApiError, texts: Texts, deployment: AttachmentSettingsState['deployment']): Partial<Record<FieldName, string>> {
  const out: Partial<Record<FieldName, string>> = {};
  for (const { path } of error.problem.errors ?? []) {
    const [, , name, index] = path.split('/');
    if (name === 'maxFileBytes') out.maxFile = `At most ${number(deployment.maxFileBytes, MIB)} MiB: the deployment allows no larger file.`;
    else if (name === 'maxTotalBytes') out.maxTotal = `At most ${number(deployment.maxTotalBytes, GIB)} GiB: the deployment allows no more.`;
    else if (name === 'allowedTypes' || name === 'refusedTypes') {
      const field = name === 'allowedTypes' ? 'allowed' : 'refused';
      const line = linesOf(texts[field])[Number(index)];
      const what = line ? `Line ${line.line} (“${line.text.slice(0, 40)}”) is not a type.` : 'At most 50 types.';
      out[field] ??= `${what} Write type/subtype (application/pdf) or type/* (image/*).`;
    }
  }
  return out;
}

export function AttachmentSettingsPanel({ calls, appId }: { calls: Calls; appId: string }) {
  const state = useLoaded(() => calls.getAttachmentSettings(appId), [calls, appId]);
  // The fields start from the stored settings, then belong to the person typing.
  const [texts, setTexts] = useDraft<Texts>(state.data && textsOf(state.data.settings), NO_TEXTS);
  const [errors, setErrors] = useState<Partial<Record<FieldName, string>>>({});
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const edit = (field: FieldName, value: string) => {
    setTexts({ ...texts, [field]: value });
    setErrors({});
    setSaved(false);
  };
  const submit = () =>
    void save.run(async () => {
      setSaved(false);
      setErrors({});
      const settings = settingsOf(texts);
      if ('field' in settings) {
        setErrors({ [settings.field]: settings.message });
        // Said as the service would say it, so the form's alert points to the field.
        throw new ChatApiError({ type: 'about:blank', title: 'Invalid field', status: 400, code: 'VALIDATION_FAILED', detail: settings.message, errors: [{ path: `/body/${settings.field}`, message: settings.message }] });
      }
      try {
        const stored = await calls.setAttachmentSettings(appId, settings);
        state.set(stored);
        setTexts(undefined);
        setSaved(true);
      } catch (error) {
        if (error instanceof ChatApiError && state.data) setErrors(fieldErrors(error, texts, state.data.deployment));
        throw error;
      }
    });
  const d = state.data?.deployment;
  const disabled = state.data === undefined;
  return html`<section class="card" aria-labelledby="attachments-title" aria-busy=${state.loading ? 'true' : 'false'}>
    <h2 id="attachments-title">Attachments</h2>
    <p>What your users may upload. Each setting narrows what this deployment allows; an empty field takes its value. Every node applies saved settings to the next upload.</p>
    ${state.failure && html`<p class="form-error" role="alert">${state.failure.message}</p>`}
    <form method="post" aria-label="Attachment settings" onSubmit=${onSubmit(submit)}>
      <${SettingField} name="maxFile" label="Largest file (MiB)" hint=${d ? `Empty: ${number(d.maxFileBytes, MIB)} MiB, the deployment’s largest.` : ''} value=${texts.maxFile} onValue=${(v: string) => edit('maxFile', v)} error=${errors.maxFile} disabled=${disabled} />
      <${SettingField}
        name="maxTotal"
        label="Total storage (GiB)"
        hint=${d ? (d.maxTotalBytes > 0 ? `Empty: ${number(d.maxTotalBytes, GIB)} GiB, the deployment’s limit.` : 'Empty: no limit.') : ''}
        value=${texts.maxTotal}
        onValue=${(v: string) => edit('maxTotal', v)}
        error=${errors.maxTotal}
        disabled=${disabled}
      />
      <${SettingField} lines name="allowed" label="Accept only these types" hint="One a line, such as image/* or application/pdf. Empty: any type not refused." value=${texts.allowed} onValue=${(v: string) => edit('allowed', v)} error=${errors.allowed} disabled=${disabled} />
      <${SettingField}
        lines
        name="refused"
        label="Also refuse"
        hint=${`One a line. Always refused, by the deployment: ${d ? d.refusedTypes.join(', ') : '…'}.`}
        value=${texts.refused}
        onValue=${(v: string) => edit('refused', v)}
        error=${errors.refused}
        disabled=${disabled}
      />
      <div class="actions"><button type="submit" disabled=${save.busy || disabled}>Save attachment settings</button></div>
    </form>
    ${saved ? html`<${Notice} text="Saved." />` : null}
    <${FormError} failure=${save.failure} />
    ${state.data?.updatedAt ? html`<p class="muted">Last changed <${When} iso=${state.data.updatedAt} />.</p>` : null}
  </section>`;
}

interface FieldProps {
  name: FieldName;
  label: string;
  hint: string;
  value: string;
  onValue: (v: string) => void;
  error?: string | undefined;
  disabled: boolean;
  /** A list, one entry a line (a textarea), rather than one number. */
  lines?: boolean;
}

/** A labelled input or list with its hint and the message about it, both announced with it. */
function SettingField(p: FieldProps) {
  const id = `attachments-${p.name}`;
  const shared = {
    id,
    name: p.name,
    value: p.value,
    disabled: p.disabled,
    onInput: (e: Event) => p.onValue((e.currentTarget as HTMLInputElement | HTMLTextAreaElement).value),
    'aria-invalid': p.error ? 'true' : undefined,
    'aria-describedby': [`${id}-hint`, p.error ? `${id}-error` : ''].filter(Boolean).join(' '),
  };
  return html`<div class="field">
    <label for=${id}>${p.label}</label>
    <p class="hint" id=${`${id}-hint`}>${p.hint}</p>
    ${p.lines ? html`<textarea rows="3" spellcheck="false" ...${shared}></textarea>` : html`<input inputmode="decimal" ...${shared} />`}
    ${p.error && html`<p class="field-error" id=${`${id}-error`}>${p.error}</p>`}
  </div>`;
}
