import { describe, expect, it } from 'vitest';
import { resumeCommand, shellQuote } from '../../src/cli/resume-hint.js';
import { runCli } from '../helpers/cli.js';

describe('the resume hint', () => {
  it('repeats every option `run` takes, whichever it is (read from run --help), except --resubmit-in-doubt and --redo', async () => {
    const help = await runCli(['run', '--help']);
    expect(help.code).toBe(0);
    const flags = [...help.stdout.matchAll(/^ {2}--([a-z-]+) /gm)].map((m) => m[1] ?? '').filter((f) => f !== 'help' && f !== 'version');
    expect(flags).toEqual(expect.arrayContaining(['budget', 'plan', 'out', 'db', 'concurrency', 'partial', 'wait', 'poll-ms', 'log-file', 'token-file']));
    const boolean = new Set([...help.stdout.matchAll(/^ {2}--([a-z-]+) [^\n]*(?:\n {20,}[^\n]*)*\[boolean\]/gm)].map((m) => m[1]));
    const argv = ['run', 'book.yaml', ...flags.flatMap((flag) => (flag === 'wait' ? ['--no-wait'] : boolean.has(flag) ? [`--${flag}`] : [`--${flag}`, `value of ${flag}`]))];

    const { text, leftOut } = resumeCommand(argv);
    expect([...leftOut].sort()).toEqual(['redo', 'resubmit-in-doubt']);
    for (const flag of flags.filter((f) => f !== 'resubmit-in-doubt' && f !== 'redo')) {
      const given = flag === 'wait' ? '--no-wait' : boolean.has(flag) ? `--${flag}` : `--${flag} 'value of ${flag}'`;
      expect(text, flag).toContain(` ${given}`);
    }
    expect(text).not.toContain('resubmit');
    expect(text).not.toContain('redo');
    expect(text.startsWith('mediabatch run book.yaml ')).toBe(true);
  });

  it('keeps the arguments as typed, in order, quoted only where a POSIX shell needs it', () => {
    const argv = ['run', 'my book.yaml', '--budget=2', '--out', "it's here", '--plan', 'basic', '--log-file', 'logs/run.jsonl', '--', '-odd'];
    expect(resumeCommand(argv)).toEqual({
      text: `mediabatch run 'my book.yaml' --budget=2 --out 'it'\\''s here' --plan basic --log-file logs/run.jsonl -- -odd`,
      leftOut: [],
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
      expect(resumeCommand(['run', 'a.yaml', ...given, '--partial']), given.join(' ')).toEqual({ text: 'mediabatch run a.yaml --partial', leftOut: ['resubmit-in-doubt'] });
    }
  });

  it('leaves out --redo with its ids once something was sent, and keeps it when asked to', () => {
    for (const given of [['--redo', 'ch-01'], ['--redo=ch-01,ch-02'], ['--redo', 'ch-01', '--redo', 'ch-02']]) {
      expect(resumeCommand(['run', 'a.yaml', ...given, '--only', 'ch-*']), given.join(' ')).toEqual({ text: "mediabatch run a.yaml --only 'ch-*'", leftOut: ['redo'] });
    }
    expect(resumeCommand(['run', 'a.yaml', '--redo', 'ch-01', '--resubmit-in-doubt'], ['resubmit-in-doubt'])).toEqual({
      text: 'mediabatch run a.yaml --redo ch-01',
      leftOut: ['resubmit-in-doubt'],
    });
  });
});
