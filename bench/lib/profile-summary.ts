import { readFileSync } from 'node:fs';

/**
 * The functions that took the most CPU in a V8 `.cpuprofile` (as written by `node --cpu-prof`),
 * by self time, grouped by function and file: `node --import tsx bench/lib/profile-summary.ts FILE [N]`.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

export function topSelfTime(profile: { nodes: ProfileNode[]; samples: number[] }, n = 15): { name: string; pct: number }[] {
  const hits = new Map<number, number>();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const byName = new Map<string, number>();
  for (const node of profile.nodes) {
    const where = node.callFrame.url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(node|common|bin)\//, '$1/');
    const name = `${node.callFrame.functionName || '(anonymous)'} ${where ? `${where}:${node.callFrame.lineNumber + 1}` : ''}`.trim();
    byName.set(name, (byName.get(name) ?? 0) + (hits.get(node.id) ?? 0));
  }
  const total = profile.samples.length;
  return [...byName.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, count]) => ({ name, pct: Math.round((1000 * count) / total) / 10 }));
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const [file, count] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node --import tsx bench/lib/profile-summary.ts FILE.cpuprofile [N]\n');
    process.exit(2);
  }
  for (const { name, pct } of topSelfTime(JSON.parse(readFileSync(file, 'utf8')), Number(count ?? 15))) process.stdout.write(`${String(pct).padStart(5)}%  ${name}\n`);
}
