/**
 * The command a stopped run tells its user to run again. It repeats every argument the run was
 * given, as typed: built from the command line itself, not from a list kept by hand, so a new
 * option is never forgotten, a default is never spelled out, and an option that came from an
 * environment variable is not turned into a flag (the token has no flag at all). Pasting it
 * must never bring back what the user overrode, such as the manifest's larger budget.
 */

/** The one option left out: sending in-doubt jobs again may pay for them twice; a person decides each time. */
const NOT_REPEATED = 'resubmit-in-doubt';

export interface ResumeCommand {
  /** `mediabatch run book.yaml --budget 2 --out 'my results'` */
  text: string;
  /** Whether --resubmit-in-doubt was given and left out. */
  leftOut: boolean;
}

/** `argv`: the arguments after the program's name, the command `run` among them. */
export function resumeCommand(argv: readonly string[]): ResumeCommand {
  const commandAt = argv.indexOf('run');
  const args = argv.filter((_, i) => i !== commandAt);
  const kept: string[] = [];
  let leftOut = false;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (arg === '--') {
      kept.push(...args.slice(i));
      break;
    }
    if (flagName(arg) !== NOT_REPEATED) {
      kept.push(arg);
      continue;
    }
    leftOut = true;
    // A boolean flag takes a following `true` or `false` as its value.
    const next = args[i + 1];
    if (!arg.includes('=') && (next === 'true' || next === 'false')) i += 1;
  }
  return { text: ['mediabatch', 'run', ...kept].map(shellQuote).join(' '), leftOut };
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
