import { chmodSync, mkdirSync, readdirSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';

/** Owner only: directories that hold private keys and stored data. */
export const PRIVATE_DIR_MODE = 0o700;
/** Owner read and write only: the files in them (LMDB's data.mdb and lock.mdb). */
export const PRIVATE_FILE_MODE = 0o600;

/** A path whose permissions were narrowed, with the modes before and after (permission bits only). */
export interface Tightened {
  path: string;
  from: number;
  to: number;
}

/**
 * Creates `dir` and any missing parents with mode 0700 (the umask can only narrow it). A directory
 * that already exists is left as it is: see tightenPrivateDir.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Removes group and other permissions from `dir` and, unless `files` is false, from every regular
 * file directly in it (never adds any, never follows into subdirectories). Returns what it changed,
 * for the caller to log; a path it may not change (not its owner) throws, with the path in the
 * message. A missing `dir` changes nothing.
 */
export function tightenPrivateDir(dir: string, { files = true }: { files?: boolean } = {}): Tightened[] {
  const changed: Tightened[] = [];
  const tighten = (path: string, allowed: number) => {
    const from = statSync(path).mode & 0o777;
    const to = from & allowed;
    if (to === from) return;
    chmodSync(path, to);
    changed.push({ path, from, to });
  };
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return changed;
    throw error;
  }
  tighten(dir, PRIVATE_DIR_MODE);
  if (files) for (const entry of entries) if (entry.isFile()) tighten(join(dir, entry.name), PRIVATE_FILE_MODE);
  return changed;
}

/** `0o755` as `0755`, for log lines. */
export const octal = (mode: number): string => `0${mode.toString(8).padStart(3, '0')}`;
