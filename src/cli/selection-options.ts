import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import type { Selection } from '../runner/index.js';

/** A flag given once is a string; given again, yargs makes the values a list. */
type Repeated = string | string[] | undefined;

export interface SelectionArgs {
  only?: Repeated;
  tag?: Repeated;
  redo?: Repeated;
}

/**
 * `--only`, `--tag` and `--redo` of run and estimate. Repeatable rather than greedy lists, so
 * nothing after them is taken for a value (the manifest may come last); ids never hold a comma,
 * so `--only` and `--redo` also take comma lists, which is how a shell pastes many of them:
 * `--only "$(mediabatch status book.yaml --state failed --format ids | paste -sd, -)"`.
 */
export function withSelectionOptions<T>(argv: Argv<T>, command: 'run' | 'estimate'): Argv<T & SelectionArgs> {
  const verb = command === 'run' ? 'send' : 'count as to send';
  const redo =
    command === 'run'
      ? 'generate these done or failed jobs again, on purpose (priced and budgeted; an earlier result is kept beside the new one)'
      : 'count these done or failed jobs as generated again (priced and budgeted as run --redo would)';
  return argv
    .option('only', {
      type: 'string',
      describe: `${verb} only jobs whose id matches: an id, or a glob with * ? [...] ("ch-0*"); repeatable, or a comma list`,
    })
    .option('tag', { type: 'string', describe: `${verb} only jobs carrying this tag (any of them, when repeated)` })
    .option('redo', { type: 'string', describe: `${redo}; repeatable, or a comma list` }) as Argv<T & SelectionArgs>;
}

/** The selection the flags ask for; an empty value is refused (it would pick nothing, or everything). */
export function parseSelection(args: SelectionArgs): Selection {
  const only = values('--only', args.only, true);
  const tags = values('--tag', args.tag, false);
  const redo = values('--redo', args.redo, true);
  const globs = redo.filter((id) => /[*?[]/.test(id));
  if (globs.length > 0) {
    throw new UsageError(`--redo takes ids of done or failed jobs, not patterns: got ${globs.map((g) => JSON.stringify(g)).join(', ')} (list them with: mediabatch status <manifest> --state done,failed --format ids)`);
  }
  return { only, tags, redo };
}

function values(flag: string, given: Repeated, commas: boolean): string[] {
  if (given === undefined) return [];
  const all = (Array.isArray(given) ? given : [given]).flatMap((value) => (commas ? String(value).split(',') : [String(value)]));
  // Ids never hold spaces: ` a, b` is two ids. A tag is taken as typed.
  const kept = commas ? all.map((value) => value.trim()) : all;
  if (kept.some((value) => value.trim() === '')) {
    const what = flag === '--tag' ? 'a tag' : flag === '--redo' ? 'an id' : 'an id or a glob such as "ch-0*"';
    throw new UsageError(`${flag}: expected ${what}, got an empty value${commas ? ' (or an empty item of a comma list)' : ''}`);
  }
  return [...new Set(kept)];
}
