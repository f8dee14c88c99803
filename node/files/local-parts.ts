import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { PRIVATE_FILE_MODE } from '../../common/files/index.ts';
import type { StoredPart } from './object-store.ts';

/** Beside each key's file, the directory of its unfinished multipart uploads: hidden, so never a key. */
const PARTS_DIR = '.multipart';

/**
 * The unfinished multipart uploads of the embedded store: each a directory beside its key's file
 * (`<dir of key>/.multipart/<name>.<id>/`), one file per part named by its number. Living under the
 * key's own directory, an upload's parts go with a deletePrefix of any prefix above it; keys never
 * start with '.', so no key can name them. A part is written like an object (a temporary file,
 * synced, renamed into place), so a part that was acknowledged is whole.
 */
export class LocalParts {
  constructor(
    /** The path of a key's file. */
    private readonly pathOf: (key: string) => string,
  ) {}

  async create(key: string): Promise<string> {
    const id = randomUUID();
    await mkdir(this.dir(key, id), { recursive: true, mode: 0o700 });
    return id;
  }

  /** Where part `n` goes, or undefined when the upload is not unfinished (completed, ended or never made). */
  async partPath(key: string, id: string, n: number): Promise<string | undefined> {
    const s = await stat(this.dir(key, id)).catch(() => undefined);
    return s?.isDirectory() ? join(this.dir(key, id), String(n)) : undefined;
  }

  async list(key: string, id: string): Promise<StoredPart[] | undefined> {
    const dir = this.dir(key, id);
    const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
      throw error;
    });
    if (!names) return undefined;
    const parts: StoredPart[] = [];
    for (const name of names) {
      if (!/^[1-9][0-9]{0,4}$/.test(name)) continue;
      const s = await stat(join(dir, name)).catch(() => undefined);
      if (s?.isFile()) parts.push({ number: Number(name), size: s.size });
    }
    return parts.sort((a, b) => a.number - b.number);
  }

  /** Writes parts `numbers` in order into the synced file `tmp` (which the caller then commits). */
  async join(key: string, id: string, numbers: readonly number[], tmp: string): Promise<void> {
    const file = await open(tmp, 'w', PRIVATE_FILE_MODE);
    try {
      for (const n of numbers) {
        const bytes = await readFile(join(this.dir(key, id), String(n))).catch((error: NodeJS.ErrnoException) => {
          throw error.code === 'ENOENT' ? new Error(`part ${n} of ${key} is not stored`) : error;
        });
        await file.writeFile(bytes);
      }
      await file.sync();
    } finally {
      await file.close();
    }
  }

  async remove(key: string, id: string): Promise<void> {
    await rm(this.dir(key, id), { recursive: true, force: true });
  }

  private dir(key: string, id: string): string {
    const path = this.pathOf(key);
    return join(dirname(path), PARTS_DIR, `${basename(path)}.${id}`);
  }
}
