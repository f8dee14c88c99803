import uws from 'uWebSockets.js';
import { listen } from '../../common/http/index.ts';

/**
 * A loopback webhook receiver in a process of its own (so its CPU is told apart from the
 * client's): answers 204 once a body is in. Sends its port once listening, and its CPU usage
 * whenever asked.
 */
const app = uws.App();
app.post('/hooks', (res) => {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  res.onData((_chunk, last) => {
    if (last && !aborted) res.cork(() => res.writeStatus('204 No Content').end());
  });
});
const listening = await listen(app, '127.0.0.1', 0);
process.send!({ port: listening.port });
process.on('message', (m) => (m === 'cpu' ? process.send!({ cpu: process.cpuUsage() }) : process.exit(0)));
