import t from 'tap';
import { client, WsClient } from '../helpers/index.ts';
import { clusterApp, clusterBackends, startCluster } from '../helpers/cluster.ts';

// README, "Moderation", on 3 nodes over Cassandra and Redis: a ban made on one node closes the
// user's sockets on every node within a second (4502), and every node refuses the user until
// the ban is lifted there or anywhere.
const backends = await clusterBackends(t);
if (backends) {
  const cluster = await startCluster({ size: 3, ...backends });
  t.teardown(() => cluster.stop());

  t.test('a ban on node A closes the user’s sockets on nodes B and C within a second; an unban on C lets it back everywhere', async (t) => {
    const { key, users } = await clusterApp(cluster, ['mod-ann', 'mod-ben']);
    const [ann, ben] = users as [{ userId: string; jwt: string }, { userId: string; jwt: string }];
    // Every node has served ann (its ban status is cached as "not banned" there).
    for (const [i, node] of cluster.nodes.entries()) t.equal((await client(node.url).get('/api/chats', ann.jwt)).status, 200, `node ${i} serves ann`);
    const sockets = await Promise.all([1, 2].map((i) => WsClient.connect(cluster.nodes[i]!.url, ann.jwt)));
    const bystander = await WsClient.connect(cluster.nodes[1]!.url, ben.jwt);
    t.teardown(() => [...sockets, bystander].forEach((s) => s.close()));

    const banned = await client(cluster.nodes[0]!.url).post('/api/moderation/bans', { userId: ann.userId, reason: 'raid' }, key.token);
    t.equal(banned.status, 201);
    const bannedAt = Date.now();
    const closes = await Promise.all(sockets.map((s) => s.waitClosed()));
    const took = Date.now() - bannedAt;
    t.same(closes.map((c) => c.code), [4502, 4502], 'the sockets on nodes B and C close with 4502');
    t.ok(took < 1000, `within a second (${took} ms)`);
    for (const [i, node] of cluster.nodes.entries()) {
      const res = await client(node.url).get('/api/chats', ann.jwt);
      t.equal(res.body.code, 'USER_BANNED', `node ${i} refuses ann at once`);
    }
    t.equal((await client(cluster.nodes[2]!.url).post('/api/users/signin', { userId: ann.userId }, key.token)).body.code, 'USER_BANNED', 'sign-in refused on another node');
    t.equal((await bystander.request({ type: 'typing.start', chatId: crypto.randomUUID() })).type, 'error', "ben's socket is still open (its action is answered)");

    t.equal((await client(cluster.nodes[2]!.url).del(`/api/moderation/bans/${ann.userId}`, key.token)).status, 204, 'unbanned on node C');
    // The unban reaches the other nodes over the bus: each serves ann again within a second.
    const liftedAt = Date.now();
    for (const [i, node] of cluster.nodes.entries()) {
      let status = 0;
      while ((status = (await client(node.url).get('/api/chats', ann.jwt)).status) !== 200 && Date.now() - liftedAt < 1000) await new Promise((resolve) => setTimeout(resolve, 20));
      t.equal(status, 200, `node ${i} serves ann again (${Date.now() - liftedAt} ms after the unban)`);
    }
    const listed = await client(cluster.nodes[1]!.url).get('/api/moderation/actions', key.token);
    t.same(listed.body.actions.map((a: { action: string }) => a.action), ['user.unbanned', 'user.banned'], 'both actions recorded, as every node reads them');
  });

  t.test('a block made on one node refuses the direct chat’s sends on every node (its owner dropped what it knew)', async (t) => {
    const { users } = await clusterApp(cluster, ['blk-ann', 'blk-ben']);
    const [ann, ben] = users as [{ userId: string; jwt: string }, { userId: string; jwt: string }];
    const chatId = (await client(cluster.nodes[0]!.url).post('/api/chats', { type: 'direct', userId: ben.userId }, ann.jwt)).body.chatId as string;
    // A send through every node: the chat's owner has read (and remembers) that nobody blocks anybody.
    for (const [i, node] of cluster.nodes.entries()) t.equal((await client(node.url).post(`/api/messages/${chatId}`, { content: `via ${i}` }, ben.jwt)).status, 201, `ben sends via node ${i}`);
    t.equal((await client(cluster.nodes[1]!.url).post('/api/users/me/blocks', { userId: ben.userId }, ann.jwt)).status, 201, 'ann blocks ben on node B');
    const blockedAt = Date.now();
    for (const [i, node] of cluster.nodes.entries()) {
      let code: string | undefined;
      while ((code = (await client(node.url).post(`/api/messages/${chatId}`, { content: 'still?' }, ben.jwt)).body.code) !== 'USER_BLOCKED' && Date.now() - blockedAt < 1000) await new Promise((resolve) => setTimeout(resolve, 20));
      t.equal(code, 'USER_BLOCKED', `refused via node ${i} (${Date.now() - blockedAt} ms after the block)`);
    }
  });

  t.test('a blocklist set on one node applies to sends on every node at once', async (t) => {
    const { key, users } = await clusterApp(cluster, ['bl-ann', 'bl-ben']);
    const [ann, ben] = users as [{ userId: string; jwt: string }, { userId: string; jwt: string }];
    const chatId = (await client(cluster.nodes[0]!.url).post('/api/chats', { type: 'direct', userId: ben.userId }, ann.jwt)).body.chatId as string;
    // Every node has read the (empty) list: it is cached there for 30 s unless a change is announced.
    for (const [i, node] of cluster.nodes.entries()) t.equal((await client(node.url).post(`/api/messages/${chatId}`, { content: `a scam via ${i}` }, ann.jwt)).status, 201, `a send via node ${i}`);
    t.equal((await client(cluster.nodes[2]!.url).put('/api/moderation/blocklist', { entries: [{ text: 'scam', action: 'block' }] }, key.token)).status, 200, 'set on node C');
    const setAt = Date.now();
    for (const [i, node] of cluster.nodes.entries()) {
      let code: string | undefined;
      while ((code = (await client(node.url).post(`/api/messages/${chatId}`, { content: 'a SCAM again' }, ann.jwt)).body.code) !== 'CONTENT_BLOCKED' && Date.now() - setAt < 1000) await new Promise((resolve) => setTimeout(resolve, 20));
      t.equal(code, 'CONTENT_BLOCKED', `refused via node ${i} (${Date.now() - setAt} ms after the change)`);
    }
  });

  t.test('a mute or chat ban made through any node holds on every node (the chat’s owner applies it); the banned member’s socket on another node is removed at once', async (t) => {
    const { key, users } = await clusterApp(cluster, ['cm-own', 'cm-mem', 'cm-oth']);
    const [owner, member, other] = users as [{ userId: string; jwt: string }, { userId: string; jwt: string }, { userId: string; jwt: string }];
    const chatId = (await client(cluster.nodes[0]!.url).post('/api/chats', { type: 'group', name: 'mod', memberIds: [member.userId, other.userId] }, owner.jwt)).body.chatId as string;
    t.equal((await client(cluster.nodes[1]!.url).post(`/api/chats/${chatId}/mutes`, { userId: member.userId }, owner.jwt)).status, 201, 'muted through node B');
    for (const [i, node] of cluster.nodes.entries()) t.equal((await client(node.url).post(`/api/messages/${chatId}`, { content: `via ${i}` }, member.jwt)).body.code, 'USER_MUTED', `refused via node ${i}`);
    t.same((await client(cluster.nodes[2]!.url).get(`/api/chats/${chatId}/mutes`, key.token)).body.mutes.map((m: { userId: string }) => m.userId), [member.userId], 'listed through node C');
    t.equal((await client(cluster.nodes[2]!.url).del(`/api/chats/${chatId}/mutes/${member.userId}`, key.token)).status, 204, 'lifted through node C');
    for (const [i, node] of cluster.nodes.entries()) t.equal((await client(node.url).post(`/api/messages/${chatId}`, { content: `back via ${i}` }, member.jwt)).status, 201, `sends via node ${i}`);

    const socket = await WsClient.connect(cluster.nodes[2]!.url, member.jwt);
    t.teardown(() => socket.close());
    t.equal((await socket.request({ type: 'typing.start', chatId })).type, 'ack', 'a member on node C');
    const bannedAt = Date.now();
    t.equal((await client(cluster.nodes[1]!.url).post(`/api/chats/${chatId}/bans`, { userId: member.userId }, key.token)).status, 201, 'banned through node B');
    t.match(await socket.waitFor((f) => f.type === 'member.banned'), { chatId, userId: member.userId }, 'the socket on node C hears its ban');
    t.match(await socket.waitFor((f) => f.type === 'membership.changed' && f.change === 'removed'), { userId: member.userId });
    t.ok(Date.now() - bannedAt < 1000, `within a second (${Date.now() - bannedAt} ms)`);
    t.equal((await socket.request({ type: 'typing.start', chatId })).code, 'CHAT_NOT_FOUND', 'and is out of the chat');
    t.equal((await client(cluster.nodes[0]!.url).post(`/api/chats/${chatId}/members`, { userIds: [member.userId] }, owner.jwt)).body.code, 'MEMBER_BANNED', 'nobody adds it back, through any node');
  });

  t.test('flags made through different nodes hide a message on every node; a review through a third restores it', async (t) => {
    const { key, users } = await clusterApp(cluster, ['fl-aut', 'fl-one', 'fl-two']);
    const [author, one, two] = users as [{ userId: string; jwt: string }, { userId: string; jwt: string }, { userId: string; jwt: string }];
    t.equal((await client(cluster.nodes[0]!.url).put('/api/moderation/settings', { flagHideThreshold: 2 }, key.token)).status, 200);
    const chatId = (await client(cluster.nodes[0]!.url).post('/api/chats', { type: 'group', name: 'flags', memberIds: [one.userId, two.userId] }, author.jwt)).body.chatId as string;
    const messageId = (await client(cluster.nodes[0]!.url).post(`/api/messages/${chatId}`, { content: 'rude words' }, author.jwt)).body.message.messageId as string;
    const watcher = await WsClient.connect(cluster.nodes[2]!.url, author.jwt);
    t.teardown(() => watcher.close());
    t.equal((await client(cluster.nodes[1]!.url).post(`/api/messages/${chatId}/${messageId}/flags`, { reason: 'rude' }, one.jwt)).body.messageHidden, false, 'one flag through node B');
    t.equal((await client(cluster.nodes[2]!.url).post(`/api/messages/${chatId}/${messageId}/flags`, { reason: 'rude' }, two.jwt)).body.messageHidden, true, 'the second, through node C, hides it');
    t.match((await watcher.waitFor((f) => f.type === 'message.hidden')).message, { messageId, hidden: true, content: '' }, 'a socket on node C is told');
    for (const [i, node] of cluster.nodes.entries()) {
      t.match((await client(node.url).get(`/api/messages/getMessages/${chatId}`, one.jwt)).body.messages[0], { messageId, hidden: true, content: '' }, `hidden in history through node ${i}`);
    }
    const queue = (await client(cluster.nodes[1]!.url).get('/api/moderation/flags', key.token)).body.flags as { flagId: string }[];
    t.equal(queue.length, 2, 'both flags in the queue, read through any node');
    t.equal((await client(cluster.nodes[0]!.url).post(`/api/moderation/flags/${queue[0]!.flagId}/resolve`, { action: 'dismiss' }, key.token)).body.flags.length, 2, 'dismissed through node A');
    t.match((await watcher.waitFor((f) => f.type === 'message.restored')).message, { messageId, content: 'rude words' });
  });
}
