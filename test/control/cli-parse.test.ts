import t from 'tap';
import { parseCommand, UsageError } from '../../control/cli/index.ts';

// The operator command line, parsed without a store: every rule that makes `npm run ctl` exit 2.
// cli-clusters.test.ts runs the real command.
const APP = '6f1e2d3c-1111-4222-8333-944455556666';

t.test('commands parse to what they name', async (t) => {
  t.same(parseCommand(['help']), { type: 'help' });
  t.same(parseCommand(['cluster', 'register', 'eu-1', 'http://127.0.0.1:9', '--help']), { type: 'help' }, '--help anywhere');
  t.same(parseCommand(['app', 'show', APP.toUpperCase()]), { type: 'app.show', appId: APP }, 'ids are lower-cased');
  t.same(parseCommand(['app', 'suspend', APP]), { type: 'app.status', appId: APP, status: 'SUSPENDED' });
  t.same(parseCommand(['app', 'reactivate', APP]), { type: 'app.status', appId: APP, status: 'ACTIVE' });
  t.same(parseCommand(['app', 'list']), { type: 'app.list', json: false });
  t.same(parseCommand(['app', 'list', '--cluster=eu-1', '--json']), { type: 'app.list', cluster: 'eu-1', json: true });
  t.same(parseCommand(['app', 'tier', APP, 'standard']), { type: 'app.move', appId: APP, tier: 'STANDARD' }, 'app tier is app move --tier');
  t.same(parseCommand(['app', 'move', APP, '--tier', 'DEMO']), { type: 'app.move', appId: APP, tier: 'DEMO' });
  t.same(parseCommand(['app', 'move', APP, '--cluster', 'eu-1']), { type: 'app.move', appId: APP, cluster: 'eu-1' });
  t.same(parseCommand(['app', 'move', '--cluster', 'eu-1', APP, '--tier', 'STANDARD']), { type: 'app.move', appId: APP, tier: 'STANDARD', cluster: 'eu-1' }, 'options in any place');
  t.same(parseCommand(['cluster', 'list', '--json']), { type: 'cluster.list', json: true });
  t.same(parseCommand(['cluster', 'register', 'eu-1', 'https://eu-1.chat.example/']), { type: 'cluster.register', name: 'eu-1', endpoint: 'https://eu-1.chat.example' }, 'one trailing slash dropped');
  t.same(parseCommand(['cluster', 'register', '0', 'http://127.0.0.1:9/base', '--status', 'offline']), { type: 'cluster.register', name: '0', endpoint: 'http://127.0.0.1:9/base', status: 'OFFLINE' });
  t.same(parseCommand(['cluster', 'register', 'a'.repeat(63), 'http://[::1]:9']), { type: 'cluster.register', name: 'a'.repeat(63), endpoint: 'http://[::1]:9' }, 'a name of 63 characters');
});

t.test('every malformed command is a UsageError saying what is wrong', async (t) => {
  const bad: [string[], RegExp][] = [
    [[], /no command/],
    [['app'], /unknown command/],
    [['app', 'delete', APP], /unknown command/],
    [['cluster', 'remove', 'eu-1'], /unknown command/],
    [['app', 'show'], /expected <appId>/],
    [['app', 'show', APP, APP], /expected <appId>/],
    [['app', 'show', 'not-an-id'], /not an application id/],
    [['app', 'tier', APP], /expected <appId> <tier>/],
    [['app', 'tier', APP, 'GOLD'], /unknown tier GOLD/],
    [['app', 'move', APP], /needs --tier, --cluster or both/],
    [['app', 'move', APP, '--tier', 'GOLD'], /unknown tier GOLD/],
    [['app', 'move', APP, '--tier'], /argument missing/],
    [['app', 'move', APP, '--cluster', 'EU-1'], /bad cluster name EU-1/],
    [['app', 'move', APP, '--zone', 'a'], /Unknown option '--zone'/],
    [['app', 'move', 'x', '--tier', 'DEMO'], /not an application id/],
    [['app', 'list', 'all'], /expected no arguments/],
    [['app', 'list', '--cluster'], /argument missing/],
    [['app', 'list', '--cluster', 'a_b'], /bad cluster name/],
    [['cluster', 'list', 'all'], /expected no arguments/],
    [['cluster', 'list', '--json=yes'], /does not take an argument/],
    [['cluster', 'register', 'eu-1'], /expected <name> <endpoint>/],
    [['cluster', 'register', 'eu_1', 'http://127.0.0.1:9'], /bad cluster name/],
    [['cluster', 'register', '-x', 'http://127.0.0.1:9'], /Unknown option/],
    [['cluster', 'register', 'a'.repeat(64), 'http://127.0.0.1:9'], /bad cluster name/],
    [['cluster', 'register', 'eu-1', 'ftp://127.0.0.1'], /bad endpoint/],
    [['cluster', 'register', 'eu-1', '127.0.0.1:9'], /bad endpoint/],
    [['cluster', 'register', 'eu-1', 'http:127.0.0.1'], /bad endpoint/],
    [['cluster', 'register', 'eu-1', 'http://'], /bad endpoint/],
    [['cluster', 'register', 'eu-1', 'http://127.0.0.1:9/?a=1'], /bad endpoint/],
    [['cluster', 'register', 'eu-1', 'http://127.0.0.1:9/#top'], /bad endpoint/],
    [['cluster', 'register', 'eu-1', 'http://op:secret@127.0.0.1:9'], /bad endpoint/],
    [['cluster', 'register', 'eu-1', 'http://127.0.0.1:9', '--status', 'SLEEPING'], /unknown status SLEEPING/],
    [['cluster', 'register', 'eu-1', 'http://127.0.0.1:9', '--status'], /argument missing/],
  ];
  for (const [argv, message] of bad) {
    const what = argv.join(' ') || '(nothing)';
    let thrown: unknown;
    try {
      parseCommand(argv);
    } catch (error) {
      thrown = error;
    }
    t.ok(thrown instanceof UsageError, `${what}: a usage error`);
    t.match((thrown as Error | undefined)?.message, message, `${what}: ${message}`);
  }
});
