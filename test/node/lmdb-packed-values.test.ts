import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import { packedPlace, packedString } from '../../node/store/lmdb/packed-values.ts';

// The index values the embedded store packs itself (node/store/lmdb/packed-values.ts) are the bytes
// its msgpack encoder writes, and are read back through the table's decoder as the same values.
t.test('lmdb packed values: the same bytes as the msgpack encoder, read back as written', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'packed-values-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const root = open({ path: dir, maxDbs: 2, compression: false });
  t.teardown(() => root.close());
  const db = root.openDB<unknown, (string | number)[]>({ name: 'messages', encoding: 'msgpack' });
  // The table's encoder (lmdb-js keeps it on the database; its typings do not name it).
  const encoder = (db as unknown as { encoder: { encode(value: unknown): Uint8Array } }).encoder;
  const encoded = (value: unknown) => Buffer.from(encoder.encode(value));
  const bytes = (binary: unknown) => (binary as Record<string, Buffer>)['\x10binary-data\x02']!;
  const strings = ['', 'a', 'x'.repeat(31), 'x'.repeat(32), '0192a4f1-3333-7333-8333-000000000001', 'é👍 mixed', 'y'.repeat(255), 'y'.repeat(256), 'z'.repeat(65_535), 'z'.repeat(65_536)];
  const buckets = [0, 63, 64, 127, 128, 255, 256, 20_423, 65_535, 65_536, 0xffffffff];
  for (const s of strings) {
    t.strictSame(bytes(packedString(s)), encoded(s), `string of ${s.length}: the encoder's bytes`);
    for (const b of buckets) {
      const same = bytes(packedPlace(b, s)).equals(encoded([b, s]));
      if (!same) t.fail(`[${b}, string of ${s.length}]: not the encoder's bytes`);
    }
  }
  t.pass(`${strings.length * buckets.length} places compared`);
  await root.transaction(() => {
    db.put(['s', 1], packedPlace(20_423, strings[4]!));
    db.put(['k', 1], packedString(strings[5]!));
  });
  t.strictSame(db.get(['s', 1]), [20_423, strings[4]], 'a place reads back as its array');
  t.strictSame(db.get(['k', 1]), strings[5], 'a string reads back as itself');
  t.throws(() => packedPlace(-1, 'a'), RangeError, 'a negative bucket is refused');
  t.throws(() => packedPlace(1.5, 'a'), RangeError, 'and a fraction');
});
