import { describe, expect, it } from 'vitest';
import { resumeCommand, shellQuote } from '../../src/cli/resume-hint.js';
import { runCli } from '../helpers/cli.js';

describe('the resume hint', () => {
  it('repeats every option `run` takes, whichever it is (read from run --help), except --resubmit-in-doubt', async () => {
    const help = await runCli(['run', '--help']);
    expect(help.code).toBe(0);
    const flags = [...help.stdout.matchAll(/^ {2}--([a-z-]+) /gm)].map((m) => m[1] ?? '').filter((f) => f !== 'help' && f !== 'version');
    expect(flags).toEqual(expect.arrayContaining(['budget', 'plan', 'out', 'db', 'concurrency', 'partial', 'wait', 'poll-ms', 'log-file', 'token-file']));
    const boolean = new Set([...help.stdout.matchAll(/^ {2}--([a-z-]+) [^\n]*(?:\n {20,}[^\n]*)*\[boolean\]/gm)].map((m) => m[1]));
    const argv = ['run', 'book.yaml', ...flags.flatMap((flag) => (flag === 'wait' ? ['--no-wait'] : boolean.has(flag) ? [`--${flag}`] : [`--${flag}`, `value of ${flag}`]))];

    const { text, leftOut } = resumeCommand(argv);
    expect(leftOut).toBe(true);
    for (const flag of flags.filter((f) => f !== 'resubmit-in-doubt')) {
      const given = flag === 'wait' ? '--no-wait' : boolean.has(flag) ? `--${flag}` : `--${flag} 'value of ${flag}'`;
      expect(text, flag).toContain(` ${given}`);
    }
    expect(text).not.toContain('resubmit');
    expect(text.startsWith('mediabatch run book.yaml ')).toBe(true);
  });

  it('keeps the arguments as typed, in order, quoted only where a POSIX shell needs it', () => {
    const argv = ['run', 'my book.yaml', '--budget=2', '--out', "it's here", '--plan', 'basic', '--log-file', 'logs/run.jsonl', '--', '-odd'];
    expect(resumeCommand(argv)).toEqual({
      text: `mediabatch run 'my book.yaml' --budget=2 --out 'it'\\''s here' --plan basic --log-file logs/run.jsonl -- -odd`,
      leftOut: false,
    });
    expect(['', 'a$b', 'x;y', '`cmd`', '~/x', '*.yaml', 'ok-1.2_3:4,5@6%7+8=9'].map(shellQuote)).toEqual([
      "''",
      "'a$b'",
      "'x;y'",
      "'`cmd`'",
      "'~/x'",
      "'*.yaml'",
      'ok-1.2_3:4,5@6%7+8=9',
    ]);
  });

  it('leaves out --resubmit-in-doubt in every spelling, with the true or false it may take', () => {
    for (const given of [['--resubmit-in-doubt'], ['--resubmit-in-doubt', 'true'], ['--resubmitInDoubt'], ['--resubmit-in-doubt=true'], ['--no-resubmit-in-doubt']]) {
      expect(resumeCommand(['run', 'a.yaml', ...given, '--partial']), given.join(' ')).toEqual({ text: 'mediabatch run a.yaml --partial', leftOut: true });
    }
  });
});
