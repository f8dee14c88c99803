import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';

const ROOT = new URL('../..', import.meta.url).pathname;

t.test("the README's SDK examples compile against the published types", async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  t.ok(examples.length >= 2, `found ${examples.length} TypeScript examples`);
  t.ok(examples.some((e) => e.includes("from 'chat-service/client'")) && examples.some((e) => e.includes("from 'chat-service/server'")), 'they use the entry points');
  // Inside the package, so `chat-service/*` resolves through its own exports map to sdk/dist.
  const dir = join(ROOT, 'tmp', `readme-examples-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  examples.forEach((code, i) => writeFileSync(join(dir, `example${i}.ts`), `${code}\nexport {};\n`));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: ['node'], strict: true, noEmit: true, skipLibCheck: false },
      include: ['*.ts'],
    }),
  );
  let output = '';
  try {
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
  } catch (error) {
    output = String((error as { stdout?: string }).stdout ?? error);
  }
  t.equal(output, '', 'tsc reports no error');
});
