#!/usr/bin/env node
// `npm run demo`: the bundled manifest end to end against the built-in simulator, no token, no
// network. Each time from a fresh ledger (a run of an already-finished ledger would send nothing
// and show nothing): the cost report, the run with its progress and summary, the files it downloaded.
import { spawn } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist/src/cli/main.js');
const dir = path.join(root, 'manifests');
const manifest = path.join(dir, 'demo.yaml');
const out = path.join(dir, 'demo.out');
const shown = (file) => path.relative(process.cwd(), file) || '.';

// Ctrl-C reaches the CLI too; it stops cleanly and its exit code is passed on.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);

function mediabatch(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal ? 130 : 1)));
  });
}

for (const name of readdirSync(dir)) {
  if (/^demo\.(mediabatch\.db(-.*)?|(estimate|run)\.(json|csv)|report\.(json|csv))$/.test(name)) rmSync(path.join(dir, name), { force: true });
}
rmSync(out, { recursive: true, force: true });

console.log(`$ mediabatch estimate ${shown(manifest)} --sim\n`);
let code = await mediabatch(['estimate', manifest, '--sim']);
if (code !== 0) process.exit(code);

console.log(`\n$ mediabatch run ${shown(manifest)} --sim --out ${shown(out)}\n`);
code = await mediabatch(['run', manifest, '--sim', '--out', out]);

const files = readdirSync(out, { withFileTypes: true }).filter((f) => f.isFile()).map((f) => f.name).sort();
console.log(`\nDownloaded ${files.length} file(s):`);
for (const name of files) console.log(`  ${shown(path.join(out, name))}  (${statSync(path.join(out, name)).size.toLocaleString('en-US')} bytes)`);
console.log(`\nRun it again: npm run demo (it starts from a fresh ledger each time). Try: mediabatch status ${shown(manifest)}`);
process.exit(code);
