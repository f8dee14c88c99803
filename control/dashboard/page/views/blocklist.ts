import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ChatApiError } from '../../../../sdk/management.ts';
import { BLOCKLIST_LIMITS } from '../../../../common/moderation/limits.ts';
import { useLoaded, type BlocklistEntry, type Calls } from '../data.ts';
import { FormError, Notice, onSubmit, useAction, useDraft } from '../forms.ts';
import { When } from '../widgets.ts';

/**
 * The application's blocklist (README, "Moderation"): two lists of words and phrases, one a line,
 * that refuse a message (`block`) or star the words out (`mask`). Saving replaces the whole list;
 * an entry the service refuses is named under its list by line.
 */

type Action = BlocklistEntry['action'];
const ACTIONS: Action[] = ['block', 'mask'];
const NO_TEXTS: Record<Action, string> = { block: '', mask: '' };
const LABELS: Record<Action, { label: string; hint: string }> = {
  block: { label: 'Refuse messages containing', hint: 'A send or edit with one of these is refused; nothing is stored.' },
  mask: { label: 'Star out', hint: 'Replaced by * in the message as stored and delivered.' },
};

/** The non-empty lines of a list, trimmed, with the line each came from (1-based). */
const linesOf = (text: string) =>
  text
    .split('\n')
    .map((raw, i) => ({ text: raw.trim(), line: i + 1 }))
    .filter((l) => l.text.length > 0);

const textOf = (entries: BlocklistEntry[], action: Action) =>
  entries
    .filter((e) => e.action === action)
    .map((e) => e.text)
    .join('\n');

export function BlocklistPanel({ calls, appId }: { calls: Calls; appId: string }) {
  const list = useLoaded(() => calls.getBlocklist(appId), [calls, appId]);
  // The fields start from the stored list, then belong to the person typing.
  const [texts, setTexts] = useDraft<Record<Action, string>>(list.data && { block: textOf(list.data.entries, 'block'), mask: textOf(list.data.entries, 'mask') }, NO_TEXTS);
  const [lineErrors, setLineErrors] = useState<Partial<Record<Action, string>>>({});
  const [saved, setSaved] = useState<number | undefined>(undefined);
  const save = useAction();

  const lines = { block: linesOf(texts.block), mask: linesOf(texts.mask) };
  const count = lines.block.length + lines.mask.length;
  const edit = (action: Action, value: string) => {
    setTexts({ ...texts, [action]: value });
    setSaved(undefined);
    setLineErrors({});
  };
  const submit = () =>
    void save.run(async () => {
      setSaved(undefined);
      setLineErrors({});
      const entries: BlocklistEntry[] = ACTIONS.flatMap((action) => lines[action].map((l) => ({ text: l.text, action })));
      if (entries.length > BLOCKLIST_LIMITS.entries) throw new Error(`a blocklist holds at most ${BLOCKLIST_LIMITS.entries.toLocaleString('en')} entries; this one has ${entries.length.toLocaleString('en')}`);
      try {
        const stored = await calls.setBlocklist(appId, entries);
        list.set(stored);
        setSaved(stored.entries.length);
      } catch (error) {
        if (error instanceof ChatApiError) setLineErrors(byLine(error, lines));
        throw error;
      }
    });

  return html`<section class="card" aria-labelledby="blocklist-title" aria-busy=${list.loading ? 'true' : 'false'}>
    <h2 id="blocklist-title">Blocklist</h2>
    <p>Words and phrases, one a line, matched as whole words whatever their case, accents or width (<code>Spâm</code> matches <code>spam</code>). Every node applies a saved list at once.</p>
    ${list.failure && html`<p class="form-error" role="alert">${list.failure.message}</p>`}
    <form method="post" class="blocklist" aria-label="Blocklist" onSubmit=${onSubmit(submit)}>
      ${ACTIONS.map((action) => html`<${ListField} action=${action} value=${texts[action]} onValue=${(v: string) => edit(action, v)} error=${lineErrors[action]} count=${lines[action].length} disabled=${list.data === undefined} />`)}
      <div class="actions">
        <button type="submit" disabled=${save.busy || list.data === undefined}>Save blocklist</button>
        <span class="muted">${count} of ${BLOCKLIST_LIMITS.entries.toLocaleString('en')} entries</span>
      </div>
    </form>
    ${saved !== undefined ? html`<${Notice} text=${`Saved: ${saved} ${saved === 1 ? 'entry' : 'entries'}.`} />` : null}
    <${FormError} failure=${save.failure} />
    ${list.data?.updatedAt ? html`<p class="muted">Last changed <${When} iso=${list.data.updatedAt} />.</p>` : null}
  </section>`;
}

function ListField({ action, value, onValue, error, count, disabled }: { action: Action; value: string; onValue: (v: string) => void; error?: string | undefined; count: number; disabled: boolean }) {
  const id = `blocklist-${action}`;
  const described = [`${id}-hint`, error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field">
    <label for=${id}>${LABELS[action].label} <span class="muted">(${count})</span></label>
    <p class="hint" id=${`${id}-hint`}>${LABELS[action].hint}</p>
    <textarea id=${id} name=${action} rows="6" spellcheck="false" value=${value} disabled=${disabled}
      onInput=${(e: Event) => onValue((e.currentTarget as HTMLTextAreaElement).value)}
      aria-invalid=${error ? 'true' : undefined} aria-describedby=${described}></textarea>
    ${error && html`<p class="field-error" id=${`${id}-error`}>${error}</p>`}
  </div>`;
}

/** The service's complaints about entries (`/body/entries/<i>/…`), as "Line n: …" under the list each came from. */
function byLine(error: ChatApiError, lines: Record<Action, { text: string; line: number }[]>): Partial<Record<Action, string>> {
  const out: Partial<Record<Action, string[]>> = {};
  for (const { path, message } of error.problem.errors ?? []) {
    const index = Number(/^\/body\/entries\/(\d+)/.exec(path)?.[1]);
    if (!Number.isInteger(index)) continue;
    const action: Action = index < lines.block.length ? 'block' : 'mask';
    const entry = action === 'block' ? lines.block[index] : lines.mask[index - lines.block.length];
    if (entry) (out[action] ??= []).push(`Line ${entry.line} (“${entry.text.slice(0, 40)}”) ${plain(message)}.`);
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v.slice(0, 5).join(' ') + (v.length > 5 ? ` And ${v.length - 5} more.` : '')]));
}

/** A schema message in words: "must NOT have more than 100 characters" → "has more than 100 characters". */
const plain = (message: string) => message.replace(/^must NOT have more than (\d+) characters$/, 'is longer than $1 characters').replace(/\.$/, '');
