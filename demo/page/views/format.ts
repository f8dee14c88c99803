import type { Message, ReplyTo } from '../../../sdk/client.ts';

/** One line of a message for lists and quotes. */
export function preview(m: Message | ReplyTo): string {
  if ('deleted' in m && m.deleted) return 'Message deleted';
  if ('hidden' in m && m.hidden) return 'Hidden pending review';
  const files = 'attachments' in m && m.attachments?.length ? `📎 ${m.attachments.map((a) => a.name).join(', ')}` : '';
  const text = m.content.length > 80 ? `${m.content.slice(0, 80)}…` : m.content;
  return text && files ? `${files} ${text}` : text || files;
}

/** 14:05 today, else the date. */
export function shortTime(iso: string): string {
  const at = new Date(iso);
  const today = new Date().toDateString() === at.toDateString();
  return today ? at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : at.toLocaleDateString([], { month: 'short', day: 'numeric' });
}
