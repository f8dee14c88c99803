import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { WEBHOOK_EVENTS } from '../../../../common/webhooks/events.ts';
import type { Calls, WebhookEndpoint } from '../data.ts';
import { Field, FormError, onSubmit, useAction } from '../forms.ts';

interface FormProps {
  calls: Calls;
  appId: string;
  /** The endpoint being changed; none: a new one is added. */
  hook?: WebhookEndpoint | undefined;
  /** The endpoint as the service now has it (with its secret when it was just added). */
  onSaved: (saved: WebhookEndpoint & { secret?: string }) => void;
  onCancel: () => void;
}

/**
 * The form adding an endpoint, or changing one: its URL, the events it receives, and an optional
 * description (emptied: removed). What the service refuses is shown under the field it names.
 */
export function EndpointForm({ calls, appId, hook, onSaved, onCancel }: FormProps) {
  const [url, setUrl] = useState(hook?.url ?? '');
  const [events, setEvents] = useState<string[]>(hook?.events ?? []);
  const [description, setDescription] = useState(hook?.description ?? '');
  const save = useAction();
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => form.current?.querySelector('input')?.focus(), []);
  const all = events.length === WEBHOOK_EVENTS.length;
  const id = hook ? `hook-edit-${hook.id}` : 'hook-form';
  const eventsError = save.failure?.fields.events;

  const pick = (event: string, on: boolean) => setEvents(WEBHOOK_EVENTS.filter((e) => (e === event ? on : events.includes(e))));
  const submit = () =>
    void save.run(async () => {
      const text = description.trim();
      onSaved(
        hook
          ? await calls.updateWebhook(appId, hook.id, { url: url.trim(), events, description: text })
          : await calls.createWebhook(appId, { url: url.trim(), events, ...(text ? { description: text } : {}) }),
      );
    });

  return html`<form id=${id} method="post" class="hook-form" aria-label=${hook ? `Edit ${hook.url}` : 'Add a webhook endpoint'} ref=${form} onSubmit=${onSubmit(submit)}
      onKeyDown=${(e: KeyboardEvent) => e.key === 'Escape' && onCancel()}>
    <${Field} label="Endpoint URL" name="url" type="url" required maxlength=${2048} value=${url} onValue=${setUrl} failure=${save.failure}
      hint="An https:// address on your backend that answers 2xx within 10 seconds." />
    <fieldset class="events" aria-describedby=${eventsError ? `${id}-events-error` : undefined}>
      <legend>Events to receive</legend>
      <label class="check select-all">
        <input type="checkbox" checked=${all} indeterminate=${events.length > 0 && !all} onChange=${(e: Event) => setEvents((e.currentTarget as HTMLInputElement).checked ? [...WEBHOOK_EVENTS] : [])} />
        Select all
      </label>
      <div class="event-grid">
        ${WEBHOOK_EVENTS.map(
          (event) => html`<label class="check">
            <input type="checkbox" name="events" value=${event} checked=${events.includes(event)} onChange=${(e: Event) => pick(event, (e.currentTarget as HTMLInputElement).checked)} />
            <code>${event}</code>
          </label>`,
        )}
      </div>
      ${eventsError ? html`<p class="field-error" id=${`${id}-events-error`}>${eventsError}</p>` : null}
    </fieldset>
    <${Field} label="Description (optional)" name="description" maxlength=${200} value=${description} onValue=${setDescription} failure=${save.failure} />
    <div class="actions">
      <button type="submit" disabled=${save.busy}>${hook ? 'Save changes' : 'Add endpoint'}</button>
      <button type="button" class="secondary" onClick=${onCancel}>Cancel</button>
    </div>
    <${FormError} failure=${save.failure} />
  </form>`;
}
