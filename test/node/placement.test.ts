import t from 'tap';
import { ownerOf } from '../../node/bus/index.ts';

const keys = Array.from({ length: 10_000 }, (_, i) => `app/chat-${i}`);
const nodes = ['node-a', 'node-b', 'node-c', 'node-d'];

t.test('every node computes the same owner, whatever the order of the list', async (t) => {
  for (const key of keys.slice(0, 500)) t.equal(ownerOf(key, nodes), ownerOf(key, [...nodes].reverse()));
  t.equal(ownerOf('x', []), undefined, 'no live node, no owner');
});

t.test('keys spread evenly: each of 4 nodes owns 25% ± 20% of them', async (t) => {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(ownerOf(key, nodes)!, (counts.get(ownerOf(key, nodes)!) ?? 0) + 1);
  for (const node of nodes) {
    const share = (counts.get(node) ?? 0) / keys.length;
    t.ok(share > 0.2 && share < 0.3, `${node} owns ${(share * 100).toFixed(1)}%`);
  }
});

t.test("a node leaving moves only its own keys, and a node joining takes only keys it now owns", async (t) => {
  const before = new Map(keys.map((k) => [k, ownerOf(k, nodes)]));
  const without = nodes.filter((n) => n !== 'node-c');
  const moved = keys.filter((k) => ownerOf(k, without) !== before.get(k));
  t.ok(moved.every((k) => before.get(k) === 'node-c'), `only node-c's keys moved (${moved.length})`);
  t.equal(moved.length, keys.filter((k) => before.get(k) === 'node-c').length, 'all of them');
  const joined = [...nodes, 'node-e'];
  const taken = keys.filter((k) => ownerOf(k, joined) !== before.get(k));
  t.ok(taken.every((k) => ownerOf(k, joined) === 'node-e'), `keys that moved went to the new node (${taken.length})`);
});
