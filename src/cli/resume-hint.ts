/**
 * The command a stopped run tells its user to run again. It repeats every argument the run was
 * given, as typed: built from the command line itself, not from a list kept by hand, so a new
 * option is never forgotten, a default is never spelled out, and an option that came from an
 * environment variable is not turned into a flag (the token has no flag at all). Pasting it
 * must never bring back what the user overrode, such as the manifest's larger budget.
 */

import type { UnjoinedSplit } from '../runner/index.js';

/**
 * The options left out, each with whether it takes a value and why it is not in the command to
 * paste. Sending in-doubt jobs again may pay for them twice: a person decides each time. A redo
 * already under way goes on without --redo (its jobs are to send or on their way), and one that
 * finished would be generated, and paid for, once more.
 */
const NOT_REPEATED: Readonly<Record<string, { takes: 'switch' | 'value'; why: string }>> = {
  'resubmit-in-doubt': {
    takes: 'switch',
    why: 'without --resubmit-in-doubt: add it again only once you have checked that no result came for the jobs in doubt',
  },
  redo: {
    takes: 'value',
    why: 'without --redo: the jobs it sent again are collected (or sent) by the plain command; one it had not reached yet is still done or failed, so name it with --redo again',
  },
};

/**
 * `argv`: the arguments after the program's name, the command `run` among them. `leaveOut`:
 * which of NOT_REPEATED to leave out (a run that sent nothing may repeat --redo). Answers the
 * command (`mediabatch run book.yaml --budget 2 --out 'my results'`) and those of `leaveOut`
 * that were given and left out.
 */
export function resumeCommand(
  argv: readonly string[],
  leaveOut: readonly string[] = Object.keys(NOT_REPEATED),
): { text: string; leftOut: string[] } {
  const commandAt = argv.indexOf('run');
  const args = argv.filter((_, i) => i !== commandAt);
  const kept: string[] = [];
  const leftOut = new Set<string>();
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (arg === '--') {
      kept.push(...args.slice(i));
      break;
    }
    const name = flagName(arg);
    if (name === undefined || !leaveOut.includes(name) || NOT_REPEATED[name] === undefined) {
      kept.push(arg);
      continue;
    }
    leftOut.add(name);
    const next = args[i + 1];
    // A switch takes a following `true` or `false` as its value; an option its next argument.
    if (arg.includes('=') || next === undefined) continue;
    if (NOT_REPEATED[name].takes === 'value' || next === 'true' || next === 'false') i += 1;
  }
  return { text: ['mediabatch', 'run', ...kept].map(shellQuote).join(' '), leftOut: [...leftOut] };
}

/** `--no-resubmitInDoubt=true` → `resubmit-in-doubt`; undefined for what is not a long option. */
function flagName(arg: string): string | undefined {
  if (!arg.startsWith('--') || arg.length === 2) return undefined;
  const name = (arg.slice(2).split('=')[0] ?? '').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return name.startsWith('no-') ? name.slice(3) : name;
}

/** As typed when a POSIX shell reads it back unchanged; in single quotes otherwise. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** The command to paste, and why an option is not in it when it was given. */
export function resumeHint(argv: readonly string[], leaveOut?: readonly string[]): string {
  const { text, leftOut } = resumeCommand(argv, leaveOut);
  return leftOut.length === 0 ? text : `${text} (${leftOut.map((name) => NOT_REPEATED[name]?.why).join('; ')})`;
}

/** What keeps each split job from its joined file, and the command that sends only those parts. */
export function unjoinedLines(unjoined: readonly UnjoinedSplit[], argv: readonly string[]): string[] {
  const command = resumeCommand(argv).text;
  return unjoined.map(({ id, failedParts }) => {
    const [them, those] = failedParts.length === 1 ? ['it', 'that part'] : ['them', 'those parts'];
    return `job "${id}" cannot be joined: ${failedParts.join(', ')} failed and no run sends ${them} again by itself. To generate only ${those} (priced and budgeted; the done parts are not paid again), then join: ${command} --redo ${failedParts.join(',')}`;
  });
}
