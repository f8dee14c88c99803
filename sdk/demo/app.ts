import { ChatClient, type ChatSummary, type Message } from '../client.ts';

/**
 * The demo page: everything a browser does with the client entry. It signs in through the demo
 * backend (which holds the API key), then talks to the cluster with the JWT only.
 */
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const state = {
  client: undefined as ChatClient | undefined,
  me: '',
  names: new Map<string, string>(),
  chatId: '',
  messages: new Map<string, Message>(),
  readByOthers: 0,
  typingTimer: undefined as ReturnType<typeof setTimeout> | undefined,
};

async function backend<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(await res.text());
  return (await res.json()) as T;
}

function render(): void {
  const log = $('log');
  const sorted = [...state.messages.values()].sort((a, b) => a.seq - b.seq);
  log.replaceChildren(
    ...sorted.map((m) => {
      const div = document.createElement('div');
      div.className = `msg${m.senderId === state.me ? ' mine' : ''}`;
      div.dataset.seq = String(m.seq);
      const meta = document.createElement('div');
      meta.className = 'meta';
      const seen = m.senderId === state.me && m.seq <= state.readByOthers ? ' · seen' : '';
      meta.textContent = `${state.names.get(m.senderId) ?? 'someone'} · #${m.seq}${m.edited ? ' · edited' : ''}${seen}`;
      const text = document.createElement('div');
      text.className = 'text';
      text.textContent = m.deleted ? '(deleted)' : m.content;
      const reactions = document.createElement('div');
      reactions.className = 'reactions';
      const counts = new Map<string, number>();
      for (const r of m.reactions) counts.set(r.reaction, (counts.get(r.reaction) ?? 0) + 1);
      for (const [value, n] of counts) {
        const b = document.createElement('button');
        b.textContent = `${value} ${n}`;
        reactions.append(b);
      }
      const like = document.createElement('button');
      like.textContent = '+👍';
      like.className = 'like';
      like.onclick = () => void state.client?.react(state.chatId, m.messageId, '👍');
      reactions.append(like);
      div.append(meta, text, reactions);
      return div;
    }),
  );
  log.scrollTop = log.scrollHeight;
}

function upsert(m: Message): void {
  if (m.chatId !== state.chatId) return;
  state.messages.set(m.messageId, m);
  render();
}

async function openChat(chatId: string): Promise<void> {
  const client = state.client!;
  state.chatId = chatId;
  state.messages.clear();
  for await (const page of client.history(chatId, 50)) for (const m of page) state.messages.set(m.messageId, m);
  const others = (await client.members(chatId)).filter((m) => m.userId !== state.me);
  state.readByOthers = Math.max(0, ...others.map((m) => m.readSeq));
  $('composer').hidden = false;
  render();
  await refreshChats();
}

async function refreshChats(): Promise<void> {
  const list = $('chats');
  const chats: ChatSummary[] = [];
  for await (const c of state.client!.chats()) chats.push(c);
  list.replaceChildren(
    ...chats.map((c) => {
      const div = document.createElement('div');
      div.className = `chat${c.chatId === state.chatId ? ' active' : ''}`;
      // A direct chat is named by its peer; the peer's name also labels its messages.
      if (c.peer) state.names.set(c.peer.userId, c.peer.displayName);
      div.textContent = `${c.name ?? c.peer?.displayName ?? 'direct chat'}${c.unreadCount ? ` (${c.unreadCount})` : ''}`;
      div.onclick = () => void openChat(c.chatId);
      return div;
    }),
  );
}

$('signin').onclick = async () => {
  const name = $<HTMLInputElement>('name').value.trim();
  if (!name) return;
  const session = await backend<{ jwt: string; refreshToken: string; userId: string; baseUrl: string }>('/demo/signin', { username: name });
  const client = new ChatClient({ baseUrl: session.baseUrl });
  client.setAuth(session);
  state.client = client;
  state.me = session.userId;
  state.names.set(session.userId, name);
  client.on('status', (s) => ($('status').textContent = `${name}: ${s}`));
  client.on('message.new', (e) => {
    upsert(e.message);
    if (e.chatId === state.chatId && e.message.senderId !== state.me) void client.markRead(e.chatId, e.seq);
  });
  client.on('message.edited', (e) => upsert(e.message));
  client.on('message.deleted', (e) => upsert(e.message));
  // After a reconnect: messages that changed while away, in their current state.
  client.on('message.updated', (e) => upsert(e.message));
  client.on('chat.stale', (e) => {
    if (e.chatId === state.chatId) void openChat(e.chatId);
  });
  client.on('reaction.added', (e) => void refreshMessage(e.chatId, e.reaction.messageId));
  client.on('reaction.removed', (e) => void refreshMessage(e.chatId, e.reaction.messageId));
  client.on('read.updated', (e) => {
    if (e.chatId === state.chatId && e.userId !== state.me) {
      state.readByOthers = Math.max(state.readByOthers, e.seq);
      render();
    }
  });
  client.on('typing.started', (e) => {
    if (e.chatId === state.chatId && e.userId !== state.me) $('typing').textContent = `${state.names.get(e.userId) ?? 'someone'} is typing…`;
  });
  client.on('typing.stopped', (e) => {
    if (e.chatId === state.chatId) $('typing').textContent = '';
  });
  client.on('membership.changed', () => void refreshChats());
  await client.connect();
  $('who').hidden = true;
  $('open').hidden = false;
  document.body.dataset.ready = 'true';
  await refreshChats();
};

async function refreshMessage(chatId: string, messageId: string): Promise<void> {
  if (chatId !== state.chatId) return;
  // Reaction events carry the reaction; the message with all its reactions comes from the ack path
  // of whoever reacted, so re-read the page that holds it.
  const page = await state.client!.getMessages(chatId, { size: 100 });
  const found = page.find((m) => m.messageId === messageId);
  if (found) upsert(found);
}

$('start').onclick = async () => {
  const friend = $<HTMLInputElement>('friend').value.trim();
  if (!friend || !state.client) return;
  const other = await backend<{ userId: string }>('/demo/user', { username: friend });
  state.names.set(other.userId, friend);
  await openChat((await state.client.directChat(other.userId)).chatId);
};

$('composer').onsubmit = (ev) => {
  ev.preventDefault();
  const input = $<HTMLInputElement>('text');
  const content = input.value.trim();
  if (!content || !state.client) return;
  input.value = '';
  clearTimeout(state.typingTimer);
  state.typingTimer = undefined;
  void state.client.typing(state.chatId, false);
  void state.client.send(state.chatId, content).then(upsert);
};

$('text').oninput = () => {
  if (!state.client || !state.chatId) return;
  if (!state.typingTimer) void state.client.typing(state.chatId, true);
  clearTimeout(state.typingTimer);
  state.typingTimer = setTimeout(() => {
    state.typingTimer = undefined;
    void state.client?.typing(state.chatId, false);
  }, 1500);
};
