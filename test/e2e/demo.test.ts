import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, collect, hasStackTrace, ROOT } from '../helpers/cli.js';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function runDemo() {
  const child = spawn(npm, ['run', 'demo'], { cwd: ROOT, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child, 45_000);
}

describe('npm run demo', () => {
  it('shows the cost report, progress, downloaded files and the summary, and does so again the next time', async () => {
    for (let round = 1; round <= 2; round += 1) {
      const result = await runDemo();
      expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
      expect(result.code, `round ${round}\n${result.stdout}\n${result.stderr}`).toBe(0);
      // The cost report, priced afresh each time (a fresh ledger: nothing cached, nothing spent).
      expect(result.stdout).toContain('Cost estimate: 13 jobs');
      expect(result.stdout).toMatch(/Price calls: [1-9]\d* \(/);
      expect(result.stdout).toMatch(/Already spent \(ledger\) +\$0\.00/);
      // Progress (stderr), the final summary and the downloaded files.
      // Off a terminal, each progress line carries the local time.
      expect(result.stderr).toMatch(/^\[\d\d:\d\d:\d\d\] 13\/13 done · /m);
      expect(result.stdout).toMatch(/done +13\n/);
      expect(result.stdout).toContain('Downloaded 13 file(s):');
      expect(result.stdout).toContain(path.join('manifests', 'demo.out', 'welcome.wav'));
      expect(result.stdout).toContain(path.join('manifests', 'demo.out', 'waves.mp4'));
      expect(result.stdout).toContain(path.join('manifests', 'demo.out', 'read-the-sign.txt'));
      expect(result.stdout).toContain(path.join('manifests', 'demo.out', 'meaning.json'));
    }
    const out = path.join(ROOT, 'manifests', 'demo.out');
    expect(readdirSync(out).sort()).toHaveLength(13);
    expect(readdirSync(out).filter((f) => f.endsWith('.part'))).toEqual([]);
    expect(existsSync(path.join(ROOT, 'manifests', 'demo.run.json'))).toBe(true);
  });
});
