import type { MessageView } from './views.ts';

/**
 * The JSON text of a message view, made at most once per view and shared by everything that
 * sends it: the chat event (realtime.EventSink), the webhook event, and the writer's own
 * acknowledgement. Guarantee: the text is `JSON.stringify(view)` as the view was when first asked;
 * views are never changed once made (a change of the message makes a new view), so it stays
 * exact. Kept by the view object itself (a weak map): nothing outlives the view.
 */
const texts = new WeakMap<MessageView, string>();

/** The view's JSON, made now if no one has made it yet. */
export function messageJson(view: MessageView): string {
  let text = texts.get(view);
  if (text === undefined) texts.set(view, (text = JSON.stringify(view)));
  return text;
}

/** The view's JSON if it was made already (an event went out with it), else undefined. */
export function madeMessageJson(view: unknown): string | undefined {
  return typeof view === 'object' && view !== null ? texts.get(view as MessageView) : undefined;
}
