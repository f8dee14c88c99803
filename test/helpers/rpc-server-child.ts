import { createLogger } from '../../common/index.ts';
import { RpcServer } from '../../node/cluster/index.ts';

/**
 * An RpcServer in a process of its own, for tests that kill it mid-call. Key from RPC_SECRET (hex);
 * prints `{"port":…}` once listening, then `{"entered":n}` each time a `hang` call starts.
 * Operations: `echo` (returns its arguments) and `hang` (never answers).
 */
let entered = 0;
const server = await RpcServer.listen('127.0.0.1', 0, {
  nodeId: 'child',
  secret: Buffer.from(process.env.RPC_SECRET ?? '', 'hex'),
  log: createLogger('silent', 'rpc-child'),
  handlers: {
    echo: async (_appId, _chatId, args) => args,
    hang: () => {
      process.stdout.write(`${JSON.stringify({ entered: ++entered })}\n`);
      return new Promise<never>(() => {});
    },
  },
});
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
