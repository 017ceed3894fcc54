/**
 * What `run --log-file` writes: the run's start, every event, its end. Fields are snake_case;
 * money is in decimal dollars; no token or secret is ever among them (none reaches this code).
 */
import type { Clock } from '../clock.js';
import { microToUsd } from '../money.js';
import type { RunEvent, RunPlan } from '../runner/index.js';
import { snakeCaseKeys } from '../report/events.js';
import type { StatusSummary } from '../report/status.js';
import { errorDocument } from './error-document.js';
import { LogFile, type LogRecord } from './log-file.js';
import type { SharedArgs } from './options.js';
import { resolveBaseUrl } from './service.js';
import { logLine } from './output.js';

/** Filled in by the run once it has its summary, for the log's last line. */
export interface RunLogEnd {
  summary?: StatusSummary | undefined;
}

/**
 * Runs `work` with the run's log open (from --log-file, else MEDIABATCH_LOG_FILE; none: no log):
 * its first line before anything else happens, its last line with the exit code however the
 * run ends (an error included, which is then thrown on), every line on disk before it returns.
 * A file that cannot be opened throws before `work` starts (exit 4, nothing sent).
 */
export async function withRunLog(
  args: SharedArgs & { 'log-file'?: string | undefined },
  manifestPath: string,
  work: (log: LogFile | undefined, end: RunLogEnd) => Promise<number>,
  clock: Clock,
): Promise<number> {
  const file = args['log-file'] ?? (process.env['MEDIABATCH_LOG_FILE'] || undefined);
  const log = file === undefined ? undefined : new LogFile(file, (message) => logLine(`warning: ${message}`), clock);
  const end: RunLogEnd = {};
  try {
    log?.write(runStartRecord(args, manifestPath));
    const exitCode = await work(log, end);
    log?.write(runEndRecord(exitCode, end.summary));
    return exitCode;
  } catch (error) {
    log?.write(runEndRecord(errorDocument(error).error.exit_code, end.summary, error));
    throw error;
  } finally {
    await log?.close();
  }
}

/** An event of the runner as a log line: `id` is the job's, `untilMs` an ISO time. */
export function runEventRecord(event: RunEvent): LogRecord {
  const { kind, ...fields } = event;
  const record: LogRecord = { event: kind };
  for (const [key, value] of Object.entries(fields)) {
    if (key === 'id') record['job_id'] = value;
    else if (key === 'untilMs' && typeof value === 'number') record['until'] = new Date(value).toISOString();
    else Object.assign(record, snakeCaseKeys({ [key]: value }));
  }
  return record;
}

/** Never written to a log, whatever a future option is called: a secret has no business there. */
const SECRET = /token|secret|password|credential/i;

/**
 * The run's first line: every option given, as parsed (kebab-case keys become snake_case),
 * with the base URL only as checked (a URL with a password in it is refused, never logged).
 */
function runStartRecord(args: SharedArgs, manifestPath: string): LogRecord {
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    // yargs also gives each kebab-case key in camelCase, and its own `_` and `$0`.
    if (key === '_' || key === '$0' || key === 'manifest' || key === 'base-url' || /[A-Z]/.test(key)) continue;
    if (value === undefined || (SECRET.test(key) && key !== 'token-file')) continue;
    options[key.replaceAll('-', '_')] = value;
  }
  return { event: 'run_start', pid: process.pid, manifest: manifestPath, base_url: checkedBaseUrl(args), options };
}

function checkedBaseUrl(args: SharedArgs): string | undefined {
  if (args.sim) return undefined;
  try {
    return resolveBaseUrl(args, process.env);
  } catch {
    return undefined;
  }
}

/** What the run found to do, once pricing, the budget and the balance let it start. */
export function runPlanRecord(plan: RunPlan, total: number, planName: string): LogRecord {
  const { budget } = plan;
  return {
    event: 'run_plan',
    plan: planName,
    jobs: total,
    to_submit: plan.send.jobs,
    to_follow: plan.counts.submitted,
    skipped: plan.skip,
    in_doubt: plan.counts.in_doubt,
    done: plan.counts.done,
    failed: plan.counts.failed,
    to_send_usd: microToUsd(budget.toSendMicro),
    spent_usd: microToUsd(budget.spentMicro),
    budget_usd: budget.budgetMicro === null ? null : microToUsd(budget.budgetMicro),
  };
}

/** The run's last line: its exit code, the counts and spend when it got that far, the error when one ended it. */
function runEndRecord(exitCode: number, summary: StatusSummary | undefined, error?: unknown): LogRecord {
  const record: LogRecord = { event: 'run_end', exit_code: exitCode };
  if (summary !== undefined) {
    record['counts'] = summary.counts;
    record['spent_usd'] = microToUsd(summary.spentMicro);
    record['budget_usd'] = summary.budgetMicro === null ? null : microToUsd(summary.budgetMicro);
  }
  if (error !== undefined) {
    const { code, message } = errorDocument(error).error;
    record['error'] = { code, message };
  }
  return record;
}
