import { readFileSync } from 'node:fs';
import t from 'tap';
import { ConfigSchema, errorCodes } from '../../common/index.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** Rows of the README table whose header row starts with `| <firstHeader> |`. */
function tableRows(firstHeader: string): string[][] {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`| ${firstHeader} |`));
  if (start < 0) return [];
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split('|').slice(1, -1).map((c) => c.trim()));
  }
  return rows;
}

const unquote = (cell: string) => cell.replace(/^`|`$/g, '');

t.test('the README error table lists exactly the codes of the registry, with their statuses', async (t) => {
  const rows = tableRows('code');
  const documented = new Map(rows.map((r) => [unquote(r[0] ?? ''), Number(r[1])]));
  t.same([...documented.keys()].sort(), Object.keys(errorCodes).sort());
  for (const [code, { status }] of Object.entries(errorCodes)) t.equal(documented.get(code), status, code);
});

t.test('the README names exactly the retryable codes of the registry', async (t) => {
  const sentence = /worth retrying unchanged[^]*?given: ([^.]*)\./.exec(readme)?.[1];
  t.ok(sentence, 'the sentence is there');
  const named = [...(sentence ?? '').matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]).sort();
  const retryable = Object.entries(errorCodes).filter(([, c]) => 'retryable' in c && c.retryable).map(([code]) => code).sort();
  t.same(named, retryable);
});

t.test('the README configuration table lists every variable of the schema with its default', async (t) => {
  const rows = tableRows('variable');
  const documented = new Map(rows.map((r) => [unquote(r[0] ?? ''), unquote(r[1] ?? '')]));
  t.same([...documented.keys()].sort(), Object.keys(ConfigSchema.properties).sort());
  for (const [name, schema] of Object.entries(ConfigSchema.properties)) {
    const def = String((schema as { default?: unknown }).default);
    t.equal(documented.get(name), def === '' ? '(empty)' : def, name);
  }
});
