/** Files that hold secrets: directories and files only their owner can read. */
export { ensurePrivateDir, octal, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, tightenPrivateDir, type Tightened } from './private.ts';
