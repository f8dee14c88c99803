import t from 'tap';
import { closeCodes } from '../../node/realtime/protocol.ts';
import { CloseCode, closeAction } from 'chat-service/client';

t.test("the SDK's reading of each close code is what the service's table says to do", async (t) => {
  const expected = { now: 'reconnect', 'after-refresh': 'refresh-then-reconnect', never: 'stop' } as const;
  for (const [name, { code, reconnect }] of Object.entries(closeCodes)) {
    t.equal(CloseCode[name as keyof typeof CloseCode], code, `${name} is ${code} in both`);
    t.equal(closeAction(code), expected[reconnect], `${name} (${code}): ${reconnect}`);
  }
  // Codes the service never sends (normal closes, abnormal ones) are not read as instructions.
  for (const code of [1000, 1001, 1006, 1011, 4200, 4600]) t.equal(closeAction(code), 'unknown', `${code}`);
});
