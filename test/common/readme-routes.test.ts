import { readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { client, startService } from '../helpers/index.ts';

// The README's two route tables (the management interface, the cluster's Routes) against the
// OpenAPI documents the services serve: every operation shown, with every success status it
// answers, and no row naming an operation the service does not have.
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const OPS_ONLY = new Set(['/healthz', '/readyz', '/metrics', '/openapi.json']);

/** The rows of the table whose header row is exactly `header`. */
function table(header: string): string[][] {
  const lines = readme.split('\n');
  const start = lines.indexOf(header);
  if (start < 0) throw new Error(`no README table with the header ${header}`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim()));
  }
  return rows;
}

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

/**
 * The operations a cell names: `GET /a/b`, "`GET`/`PUT /a/b`" (both methods on one path), "`GET`,
 * `DELETE /a/b`", and `GET …/c` (a path ending in /c: the one of that method in the document).
 */
function operations(cell: string, doc: Doc): { op: string; found: boolean }[] {
  const out: { op: string; found: boolean }[] = [];
  let methods: string[] = [];
  let base = '';
  const common = (a: string, b: string) => {
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    return i;
  };
  for (const [, span] of cell.matchAll(/`([^`]+)`/g)) {
    const [method, rawPath] = span!.split(' ') as [string, string | undefined];
    methods.push(method);
    if (!rawPath) continue;
    const path = rawPath.replace(/\?.*$/, '');
    for (const m of methods) {
      const key = m.toLowerCase();
      // A path of `…` ends like one in the document; of several, the one nearest the cell's full path.
      const candidates = path.startsWith('…') ? Object.keys(doc.paths).filter((p) => p.endsWith(path.slice(1)) && doc.paths[p]![key]) : [path];
      const nearest = Math.max(...candidates.map((p) => common(p, base)));
      const full = candidates.length > 1 ? candidates.filter((p) => common(p, base) === nearest) : candidates;
      const found = full.length === 1 && !!doc.paths[full[0]!]?.[key];
      out.push({ op: `${m} ${found ? full[0] : path}`, found });
    }
    methods = [];
    if (!path.startsWith('…')) base = path;
  }
  return out;
}

function check(t: Test, doc: Doc, rows: string[][], pathColumn: number, successColumn: number): void {
  const documented = new Map<string, string>();
  for (const row of rows) {
    for (const { op, found } of operations(row[pathColumn] ?? '', doc)) {
      t.ok(found, `the README's ${op} is an operation of the service`);
      documented.set(op, row[successColumn] ?? '');
    }
  }
  for (const [path, methods] of Object.entries(doc.paths)) {
    if (OPS_ONLY.has(path)) continue;
    for (const [method, op] of Object.entries(methods)) {
      const name = `${method.toUpperCase()} ${path}`;
      const success = documented.get(name);
      t.ok(success !== undefined, `${name} has a README row`);
      for (const status of Object.keys(op.responses).filter((s) => s.startsWith('2'))) t.match(success ?? '', new RegExp(`\\b${status}\\b`), `${name}: the README shows its ${status}`);
    }
  }
}

const svc = await startService();
t.teardown(() => svc.stop());

t.test('the README shows every management operation with its responses', async (t) => {
  const doc = (await client(svc.controlUrl).get('/openapi.json')).body as Doc;
  check(t, doc, table('| Operation | Method and path | Request | Success |'), 1, 3);
});

t.test("the README shows every cluster route with its responses", async (t) => {
  const doc = (await client(svc.nodeUrl).get('/openapi.json')).body as Doc;
  check(t, doc, table('| Who | Method and path | Request | Success |'), 1, 3);
});
