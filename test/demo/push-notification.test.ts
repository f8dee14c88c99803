import t from 'tap';
import { notificationFor, PRIVATE_BODY } from '../../demo/page/push-notification.ts';

// What the reference app's service worker shows for each kind of push payload (README, "Push
// notifications"); test/demo/reference-app-notifications.test.ts shows them in Chromium.
const ids = { type: 'message.new', chatId: 'c1', messageId: 'm1', seq: '7', senderId: 'u1', mentioned: 'false' };

t.test('a group message: sender in chat, the text, tagged with the chat', async (t) => {
  t.same(notificationFor({ ...ids, senderName: 'Alice', chatName: 'Team', text: 'hi' }), { title: 'Alice in Team', options: { body: 'hi', tag: 'c1', renotify: false, data: { chatId: 'c1' } } });
});

t.test('a direct chat has no name: the sender is the title; a message of files only says so', async (t) => {
  t.match(notificationFor({ ...ids, senderName: 'Alice', text: 'hi' }), { title: 'Alice', options: { body: 'hi' } });
  t.match(notificationFor({ ...ids, senderName: 'Alice', chatName: 'Team' }), { title: 'Alice in Team', options: { body: 'Sent a message.' } });
});

t.test('private mode (ids only): a generic notification, still tagged with the chat', async (t) => {
  t.same(notificationFor(ids), { title: 'New message', options: { body: PRIVATE_BODY, tag: 'c1', renotify: false, data: { chatId: 'c1' } } });
});

t.test('a mention alerts again; a newer message of a busy chat replaces quietly', async (t) => {
  t.equal(notificationFor({ ...ids, mentioned: 'true', senderName: 'Alice', text: '@bob' }).options.renotify, true);
  t.equal(notificationFor({ ...ids, senderName: 'Alice', text: 'x' }).options.renotify, false);
});

t.test('a payload that is not one of ours still shows something (userVisibleOnly: every push is shown)', async (t) => {
  for (const payload of [undefined, null, 'text', 42, { chatId: 5, text: '' }]) {
    t.same(notificationFor(payload), { title: 'New message', options: { body: PRIVATE_BODY, tag: undefined, renotify: false, data: { chatId: undefined } } }, JSON.stringify(payload) ?? 'undefined');
  }
});
