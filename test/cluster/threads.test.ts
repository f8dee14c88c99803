import t from 'tap';
import { client, WsClient } from '../helpers/index.ts';
import { clusterApp, clusterBackends, startCluster } from '../helpers/cluster.ts';

// README, "Threads", on 3 nodes over Cassandra and Redis: a thread whose chat moves to another
// node (its owner stopped), and moves again (that one stopped too, the first started again), keeps
// numbering its replies without a gap or a repeat, its summary counts each once, and its
// followers' unread replies and inbox are right on every node.
const backends = await clusterBackends(t);
if (backends) {
  const cluster = await startCluster({ size: 3, ...backends });
  t.teardown(() => cluster.stop());

  t.test("a thread's chat moves to another node, then again: replies numbered once each, summary and unread counts right everywhere", async (t) => {
    const { users, appId } = await clusterApp(cluster, ['thr-ann', 'thr-ben', 'thr-cat']);
    const [ann, ben, cat] = users as [{ userId: string; jwt: string }, { userId: string; jwt: string }, { userId: string; jwt: string }];
    const chatId = (await client(cluster.nodes[0]!.url).post('/api/chats', { type: 'group', name: 'moving thread', memberIds: [ben.userId, cat.userId] }, ann.jwt)).body.chatId as string;
    const owner = cluster.ownerOf(appId, chatId);
    const index = cluster.nodes.indexOf(owner);
    const others = cluster.nodes.filter((n) => n !== owner);
    t.comment(`the chat's owner is node ${index}`);
    const parent = (await client(others[0]!.url).post(`/api/messages/${chatId}`, { content: 'the plan' }, ann.jwt)).body.message;

    // A reply through a node that does not own the chat, retried with its key until acknowledged.
    const acked: { seq: number; content: string }[] = [];
    const reply = async (n: number, via: string, author: { jwt: string }) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const r = await client(via).post(`/api/messages/${chatId}`, { content: `reply ${n}`, parentId: parent.messageId, idempotencyKey: `reply-${n}` }, author.jwt).catch(() => undefined);
        if (r && (r.status === 201 || r.status === 200)) return void acked.push({ seq: r.body.message.seq, content: `reply ${n}` });
        if (Date.now() > deadline) throw new Error(`reply ${n} not acknowledged: ${r?.status} ${r?.text}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    for (let n = 1; n <= 5; n++) await reply(n, others[n % 2]!.url, n % 2 ? ben : cat);

    await owner.process.stop();
    await cluster.settled();
    const second = cluster.ownerOf(appId, chatId);
    const secondIndex = cluster.nodes.indexOf(second);
    t.not(secondIndex, index, `node ${index} stopped: the chat moved to node ${secondIndex}`);
    // A member's socket on the node that stays up throughout sees every summary from here on.
    const steady = cluster.nodes.find((_, i) => i !== index && i !== secondIndex)!;
    const watcher = await WsClient.connect(steady.url, cat.jwt);
    t.teardown(() => watcher.close());
    for (let n = 6; n <= 10; n++) await reply(n, others[n % 2]!.url, n % 2 ? ben : cat);

    await cluster.startNode(index);
    await second.process.stop();
    await cluster.settled();
    const third = cluster.nodes.indexOf(cluster.ownerOf(appId, chatId));
    t.not(third, secondIndex, `node ${secondIndex} stopped, node ${index} started again: the chat moved to node ${third}`);
    for (let n = 11; n <= 15; n++) await reply(n, cluster.nodes[n % 2 ? index : cluster.nodes.indexOf(steady)]!.url, n % 2 ? ben : cat);
    await cluster.startNode(secondIndex);
    await cluster.settled();

    t.same(acked.map((a) => a.seq), Array.from({ length: 15 }, (_, i) => i + 1), 'the replies are numbered 1…15 across both moves');
    for (const [i, node] of cluster.nodes.entries()) {
      const page = (await client(node.url).get(`/api/chats/${chatId}/threads/${parent.messageId}/messages?size=20`, ann.jwt)).body.messages as { seq: number; content: string }[];
      t.same(page.map((m) => [m.seq, m.content]), acked.map((a) => [a.seq, a.content]).reverse(), `node ${i} pages the thread: each reply once, in order`);
      const [inHistory] = (await client(node.url).get(`/api/messages/getMessages/${chatId}`, ben.jwt)).body.messages;
      t.equal(inHistory.thread.replyCount, 15, `node ${i}: the parent's summary counts 15`);
      t.match((await client(node.url).get(`/api/chats/${chatId}/threads/${parent.messageId}`, ann.jwt)).body, { following: true, unreadCount: 15 }, `node ${i}: the parent's author has 15 unread replies`);
    }
    const inbox = (await client(others[1]!.url).get('/api/users/me/threads?unread=true', ann.jwt)).body;
    t.same([inbox.unreadThreads, inbox.threads[0]?.parentId], [1, parent.messageId], "the author's inbox, from any node");
    const annSocket = await WsClient.connect(steady.url, ann.jwt);
    t.teardown(() => annSocket.close());
    t.match((await client(others[0]!.url).post(`/api/chats/${chatId}/threads/${parent.messageId}/read`, { seq: 15 }, ann.jwt)).body, { readSeq: 15, unreadCount: 0 }, 'read through another node');
    t.match(await annSocket.waitFor((f) => f.type === 'thread.read'), { chatId, parentId: parent.messageId, seq: 15 }, "the reader's socket on another node is told");
    const summaries = watcher.frames.filter((f) => f.type === 'thread.updated' && f.parentId === parent.messageId).map((f) => f.thread.replyCount as number);
    t.same([...new Set(summaries)].sort((a, b) => a - b), Array.from({ length: 10 }, (_, i) => i + 6), "a member's socket saw the summary after every reply from the first move on, across the second");
    // Each reply's event shares its summary's revision: a node passes it on after the summary, once.
    const replies = watcher.frames.filter((f) => f.type === 'thread.reply' && f.parentId === parent.messageId).map((f) => f.seq as number);
    t.same(replies, Array.from({ length: 10 }, (_, i) => i + 6), "a follower's socket on a node that owns nothing got each reply from the first move on, once, in order");
  });
}
