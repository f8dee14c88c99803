import { readFileSync } from 'node:fs';
import t from 'tap';
import { renderProtocolDoc } from '../../node/realtime/protocol-doc.ts';
import { actionSchemas } from '../../node/realtime/protocol.ts';
import { chatEventSchemas, userEventSchemas } from '../../node/chat/events.ts';

t.test('the committed WebSocket protocol document is the one the schemas render (run npm run docs)', async (t) => {
  const committed = readFileSync(new URL('../../node/realtime/PROTOCOL.md', import.meta.url), 'utf8');
  t.equal(committed, renderProtocolDoc());
  for (const type of [...Object.keys(actionSchemas), ...Object.keys(chatEventSchemas), ...Object.keys(userEventSchemas)]) {
    t.ok(committed.includes(`### \`${type}\``), `documents ${type}`);
  }
});
