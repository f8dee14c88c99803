import { writeFileSync } from 'node:fs';
import { renderProtocolDoc } from '../node/realtime/index.ts';

/** Regenerates the documents that are rendered from schemas. */
writeFileSync(new URL('../node/realtime/PROTOCOL.md', import.meta.url), renderProtocolDoc());
process.stdout.write('wrote node/realtime/PROTOCOL.md\n');
