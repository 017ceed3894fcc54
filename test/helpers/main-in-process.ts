import { vi } from 'vitest';
import { main } from '../../src/cli/app.js';
import type { CliResult } from './cli.js';

/**
 * The CLI's entry point in this process, for refusals of what was typed (each decided before a
 * command starts anything or reads stdin): the exit code it returns and what it wrote on stderr.
 * A spawn costs about half a second of startup; one spawn per distinct behaviour shows the process.
 */
export async function mainInProcess(argv: string[]): Promise<Pick<CliResult, 'code' | 'stderr'>> {
  let stderr = '';
  const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  });
  try {
    const code = await main(argv);
    return { code, stderr };
  } finally {
    write.mockRestore();
  }
}
