import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { addUser } from '../backend.ts';
import type { ChatState } from '../chat-state.ts';

/**
 * A new chat: direct with one person, or a named group with several. People are picked from the
 * demo backend's directory; a name not in it yet can be added (the backend registers it).
 */
export function NewChat({ state, onDone }: { state: ChatState; onDone: () => void }) {
  const [kind, setKind] = useState<'direct' | 'group'>('direct');
  const [picked, setPicked] = useState<string[]>([]);
  const [name, setName] = useState('');
  const [newPerson, setNewPerson] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const people = state.directory.filter((u) => u.userId !== state.me.userId);

  const toggle = (userId: string) => setPicked(kind === 'direct' ? [userId] : picked.includes(userId) ? picked.filter((id) => id !== userId) : [...picked, userId]);
  const add = async () => {
    if (!newPerson.trim()) return;
    setError(undefined);
    try {
      const user = await addUser(newPerson);
      await state.loadDirectory();
      setNewPerson('');
      if (user.userId === state.me.userId) setError('That is you: pick someone else.');
      else setPicked(kind === 'direct' ? [user.userId] : [...new Set([...picked, user.userId])]);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  const create = async (e: Event) => {
    e.preventDefault();
    if (picked.length === 0) return setError(kind === 'direct' ? 'Pick the person to chat with.' : 'Pick at least one member.');
    if (kind === 'group' && !name.trim()) return setError('A group needs a name.');
    setBusy(true);
    setError(undefined);
    try {
      await state.createChat(kind, picked, name.trim());
      onDone();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  };

  return html`<form class="new-chat" aria-label="New chat" onSubmit=${create}>
    <fieldset class="kind">
      <legend>New chat</legend>
      <label><input type="radio" name="kind" value="direct" checked=${kind === 'direct'} onChange=${() => (setKind('direct'), setPicked(picked.slice(0, 1)))} /> Direct</label>
      <label><input type="radio" name="kind" value="group" checked=${kind === 'group'} onChange=${() => setKind('group')} /> Group</label>
    </fieldset>
    ${kind === 'group'
      ? html`<label class="field">Group name <input name="group-name" value=${name} maxlength="200" onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} /></label>`
      : null}
    <fieldset class="people">
      <legend>${kind === 'direct' ? 'With' : 'Members'}</legend>
      ${people.length === 0 ? html`<p class="muted small">Nobody else has signed in yet: add a name below.</p>` : null}
      <ul>
        ${people.map(
          (u) => html`<li key=${u.userId}>
            <label><input type=${kind === 'direct' ? 'radio' : 'checkbox'} name="person" value=${u.username} checked=${picked.includes(u.userId)} onChange=${() => toggle(u.userId)} />
            ${u.displayName} ${state.online.has(u.userId) ? html`<span class="muted small">online</span>` : null}</label>
          </li>`,
        )}
      </ul>
      <div class="row">
        <input name="new-person" placeholder="someone new" aria-label="Add someone by name" value=${newPerson} onInput=${(e: Event) => setNewPerson((e.target as HTMLInputElement).value)} onKeyDown=${(e: KeyboardEvent) => e.key === 'Enter' && (e.preventDefault(), void add())} />
        <button type="button" class="secondary" onClick=${() => void add()}>Add</button>
      </div>
    </fieldset>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <button type="submit" disabled=${busy}>${busy ? 'Creating…' : kind === 'direct' ? 'Open chat' : 'Create group'}</button>
  </form>`;
}
