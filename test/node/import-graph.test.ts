import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import t from 'tap';
import ts from 'typescript';

/**
 * The core owns the interfaces it calls: `node/chat` declares its ports (EventSink, ChatWebhooks
 * and changeWithEvents in change-events.ts, BeforeSendPort) and the input schemas, and
 * `node/realtime` and `node/webhooks` implement them from above. So no import cycle may pass
 * through those three folders. Imports are read with TypeScript's own pre-processor (type-only
 * imports count: they are arrows too), relative ones resolved to files, and cycles found as the
 * strongly connected components of the graph of `node/` and `common/`.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const GUARDED = ['node/chat/', 'node/realtime/', 'node/webhooks/'];

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return files(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
  return importedFiles.map((i) => i.fileName).filter((name) => name.startsWith('.')).map((name) => relative(ROOT, resolve(ROOT, dirname(file), name)));
}

/** Tarjan's strongly connected components: every one with more than one file is a cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

t.test('no import cycle passes through node/chat, node/realtime or node/webhooks', async (t) => {
  const all = [...files('node'), ...files('common')];
  const graph = new Map(all.map((file) => [file, importsOf(file)]));
  t.ok(graph.size > 150, `${graph.size} files read`);
  t.ok(graph.get('node/realtime/gateway.ts')!.includes('node/chat/index.ts'), 'imports are resolved (the gateway imports chat)');
  const found = cycles(graph);
  const guarded = found.filter((c) => c.some((file) => GUARDED.some((dir) => file.startsWith(dir))));
  t.same(guarded, [], 'cycles through the guarded folders');
  for (const c of found.filter((c) => !guarded.includes(c))) t.comment(`elsewhere: a cycle of ${c.length} files: ${c.join(', ')}`);
  t.notOk(found.some((c) => c.includes('node/chat/index.ts')), 'chat imports none of its consumers');
});
