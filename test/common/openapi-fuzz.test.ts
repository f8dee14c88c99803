import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import { integration, startService } from '../helpers/index.ts';

// Property-based fuzzing of both OpenAPI documents with Schemathesis (README, Tests): every
// operation gets generated requests, valid and not; none may get a 5xx, a status its document
// does not list, or no answer at all (a dropped or hung connection counts as a failure). Bounded:
// a fixed seed, a fixed number of cases per operation, and a time limit per document.
const ST = process.env.SCHEMATHESIS ?? new URL('../../tmp/fuzz-venv/bin/st', import.meta.url).pathname;
const CASES_PER_OPERATION = Number(process.env.FUZZ_CASES ?? 20);
const LIMIT_MS = 240_000;
/**
 * How long Schemathesis waits for an answer (s). Every request the HTTP parser holds (see
 * Findings.heldByParser: about 50 per document) waits this long, one after another: at 3 s they
 * took about 150 of the test's 210 s. Answered requests take milliseconds (scrypt, the slowest,
 * about 100 ms on a loaded machine), so 1.5 s leaves room.
 */
const REQUEST_TIMEOUT_S = 1.5;
t.setTimeout(2 * LIMIT_MS + 60_000);

/** What one run found, from Schemathesis's event stream (`--report ndjson`). */
interface Findings {
  /** Requests that got an answer. */
  cases: number;
  /** Checks that failed: a 5xx, or a status the document does not list. */
  failedChecks: string[];
  /** Requests with no answer whose headers are valid: connection drops of this service's own making. */
  unanswered: string[];
  /**
   * Requests with no answer that carry a header name of characters other than letters, digits and
   * `-`: the HTTP parser of the pinned uWebSockets.js build takes no other name character (not even
   * RFC 9110's `_ . ! # $ % & ' * + ^ \` | ~`) and holds such a request until its idle timeout,
   * before any of this service's code runs (README, HTTP rules). Counted, not failed.
   */
  heldByParser: number;
}

const PARSED_NAME = /^[0-9A-Za-z-]+$/;

function findingsOf(events: string): Findings {
  const found: Findings = { cases: 0, failedChecks: [], unanswered: [], heldByParser: 0 };
  for (const line of events.split('\n')) {
    if (!line.includes('"ScenarioFinished"')) continue;
    const { recorder } = (JSON.parse(line) as { ScenarioFinished: { recorder: Recorder } }).ScenarioFinished;
    for (const [id, interaction] of Object.entries(recorder.interactions)) {
      if (interaction.response) {
        found.cases++;
        continue;
      }
      const headers = Object.keys(interaction.request?.headers ?? {});
      if (headers.some((h) => !PARSED_NAME.test(h))) found.heldByParser++;
      else found.unanswered.push(`${recorder.label} (${id}): ${interaction.request?.method} ${interaction.request?.uri}`);
    }
    for (const [id, checks] of Object.entries(recorder.checks)) {
      for (const check of checks) if (check.status === 'failure') found.failedChecks.push(`${recorder.label} (${id}): ${check.name}`);
    }
  }
  return found;
}

interface Recorder {
  label: string;
  interactions: Record<string, { request?: { method: string; uri: string; headers: Record<string, unknown> }; response?: { status_code: number } | null }>;
  checks: Record<string, { name: string; status: string }[]>;
}

if (!existsSync(ST)) {
  if (process.env.CI === 'true') t.fail(`Schemathesis not found at ${ST}: .ci/run installs it (python3 -m venv tmp/fuzz-venv && tmp/fuzz-venv/bin/pip install schemathesis==4.32.5)`);
  else {
    t.comment(`!!! OpenAPI fuzzing SKIPPED: no Schemathesis at ${ST} (python3 -m venv tmp/fuzz-venv && tmp/fuzz-venv/bin/pip install schemathesis==4.32.5) !!!`);
    t.skip(`no Schemathesis at ${ST}`, () => undefined);
  }
} else {
  // Budgets high enough that the cases reach the routes' logic rather than their rate limits.
  const svc = await startService({ LOGIN_MAX_PER_ADDRESS: '1000000', LOGIN_MAX_FAILURES: '1000000', USER_REQUESTS_PER_SECOND: '100000', USER_WRITES_PER_SECOND: '100000', USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', API_KEY_REQUESTS_PER_SECOND: '100000', REFRESH_PER_ADDRESS_PER_MINUTE: '1000000' });
  t.teardown(() => svc.stop());
  const it = await integration(svc, 'fuzz');
  const user = await it.user('fuzzer');

  /** Runs Schemathesis on one document with these bearer tokens per security scheme; resolves with its exit code and output. */
  async function fuzz(url: string, tokens: Record<string, string>): Promise<{ code: number | null; output: string; findings: Findings }> {
    const dir = mkdtempSync(join(tmpdir(), 'fuzz-'));
    try {
      // Methods outside the nine uWebSockets.js parses (QUERY, PROPFIND, …) get the connection
      // closed before any of this service's code runs (README, HTTP rules): known, measured, and
      // left out here so that everything else is held to zero.
      const config = [`[phases.coverage]\nunexpected-methods = ["GET", "PUT", "POST", "DELETE", "OPTIONS", "PATCH", "TRACE"]\n`, ...Object.entries(tokens).map(([scheme, token]) => `[auth.openapi.${scheme}]\nbearer = "${token}"\n`)];
      writeFileSync(join(dir, 'schemathesis.toml'), config.join('\n'));
      const args = ['run', `${url}/openapi.json`, '--checks', 'not_a_server_error,status_code_conformance', '--max-examples', String(CASES_PER_OPERATION), '--phases', 'coverage,fuzzing', '--request-timeout', String(REQUEST_TIMEOUT_S), '--seed', '20261123', '--no-shrink', '--no-color', '--report', 'ndjson', '--report-ndjson-path', join(dir, 'events.ndjson')];
      const child = spawn(ST, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), LIMIT_MS);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      clearTimeout(timer);
      const events = existsSync(join(dir, 'events.ndjson')) ? readFileSync(join(dir, 'events.ndjson'), 'utf8') : '';
      return { code, output, findings: findingsOf(events) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  // Both documents are fuzzed at once (each run mostly waits on the other process's answers).
  const runs = [
    ['control service', svc.controlUrl, { accessToken: it.accessToken }],
    ['cluster node', svc.nodeUrl, { apiKey: it.apiKey, userJwt: user.jwt }],
  ] as const;
  const results = runs.map(([, url, tokens]) => fuzz(url, tokens));
  for (const [i, [name]] of runs.entries()) {
    t.test(`${name}: no 5xx, no undocumented status, every request answered`, async (t) => {
      const { code, output, findings } = await results[i]!;
      // The whole report, for reading after a failure (tmp/ is not committed).
      const report = new URL(`../../tmp/fuzz-${name.replace(/\W+/g, '-')}.log`, import.meta.url).pathname;
      mkdirSync(dirname(report), { recursive: true });
      writeFileSync(report, output);
      t.comment(`${findings.cases} requests answered, ${findings.heldByParser} held by the HTTP parser (a header name of other characters than letters, digits and -)`);
      t.ok(findings.cases > 100, `Schemathesis ran (exit ${code}; report in ${report})`);
      t.same(findings.failedChecks, [], 'no 5xx and no undocumented status');
      t.same(findings.unanswered, [], 'every other request answered');
    });
  }
}
