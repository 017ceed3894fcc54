import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(ROOT, 'dist/src/cli/main.js');

export interface Measured {
  wallMs: number;
  peakRssMb: number;
  code: number | null;
  stderrTail: string;
}

/** Runs the built CLI and samples its peak resident set (VmHWM) from /proc while it runs. */
export function measureCli(args: string[], env: NodeJS.ProcessEnv, options: { cwd?: string } = {}): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], { env, cwd: options.cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let peakKb = 0;
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    const sample = async (): Promise<void> => {
      try {
        const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
        const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
        peakKb = Math.max(peakKb, kb);
      } catch {
        // The process ended between samples; the last sample stands.
      }
    };
    const timer = setInterval(() => void sample(), 25);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(timer);
      resolve({ wallMs: performance.now() - started, peakRssMb: peakKb / 1024, code, stderrTail: stderr.slice(-500) });
    });
  });
}

export function fmt(n: number): string {
  return n >= 100 ? n.toFixed(0) : n.toFixed(1);
}
