import { chmodSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { removeDir, startService } from '../helpers/index.ts';

// The embedded stores hold the signing keys' private halves: DATA_DIR and the store directories
// are owner-only, their files owner read-write, whatever the umask; a start narrows looser ones.

const mode = (path: string) => statSync(path).mode & 0o777;
const STORES = ['control', 'node'];

/** DATA_DIR and both store directories are 0700; every file in the stores (data.mdb, lock.mdb) 0600. */
function assertPrivate(t: Test, dataDir: string): void {
  t.equal(mode(dataDir).toString(8), '700', 'DATA_DIR is 0700');
  for (const store of STORES) {
    const dir = join(dataDir, store);
    t.equal(mode(dir).toString(8), '700', `${store}/ is 0700`);
    const files = readdirSync(dir);
    t.ok(files.includes('data.mdb') && files.includes('lock.mdb'), `${store}/ holds the LMDB files`);
    for (const file of files) t.equal(mode(join(dir, file)).toString(8), '600', `${store}/${file} is 0600`);
  }
}

t.test('a first start creates the data directory 0700 and the store files 0600', async (t) => {
  const svc = await startService();
  t.teardown(async () => {
    await svc.stop();
    removeDir(svc.dataDir);
  });
  assertPrivate(t, svc.dataDir);
});

t.test('a start narrows a data directory and store files that others could read, and says so', async (t) => {
  const first = await startService();
  await first.stop();
  t.teardown(() => removeDir(first.dataDir));
  // As a service of an earlier version left them (umask 022).
  chmodSync(first.dataDir, 0o755);
  for (const store of STORES) {
    const dir = join(first.dataDir, store);
    chmodSync(dir, 0o755);
    for (const file of readdirSync(dir)) chmodSync(join(dir, file), 0o644);
  }

  const again = await startService({}, first.dataDir);
  t.teardown(() => again.stop());
  assertPrivate(t, first.dataDir);
  const narrowed = again
    .output()
    .split('\n')
    .filter((line) => line.includes('narrowed the mode'));
  t.ok(narrowed.some((l) => l.includes(join(first.dataDir, 'control', 'data.mdb')) && l.includes('from 0644 to 0600')), 'the control store file is logged');
  t.ok(narrowed.some((l) => l.includes(join(first.dataDir, 'node')) && l.includes('from 0755 to 0700')), 'a store directory is logged');
  t.equal(narrowed.length, 2 * 3 + 1, 'one warning per narrowed path: DATA_DIR, two directories, four files');
});
