import path from 'node:path';
import type { MicroUsd } from '../money.js';
import { renderReviewPage, type ReviewJob } from '../report/review-page/render.js';
import { failureText } from '../report/status.js';
import type { JobRow, LedgerHandle, ListingLedger, PlanLedger } from '../store/index.js';
import { writeReportFile } from './report-file.js';
import { jobWindows, mapRows } from './windows.js';

export interface ReviewPageRequest {
  /** The manifest's path: the page is titled with its name. */
  manifest: string;
  budgetMicro: MicroUsd | null;
  generatedAt: Date;
}

/**
 * Writes `<name>.report.html` from the ledger alone, streaming its jobs a window at a time, as
 * every report file is written (writeReportFile): whoever opens it never sees half a page.
 */
export async function writeReviewPage(
  ledger: Pick<ListingLedger, 'readJobs'> & Pick<PlanLedger, 'spentMicro'> & Pick<LedgerHandle, 'location'>,
  file: string,
  request: ReviewPageRequest,
  rows: AsyncIterable<JobRow> = jobWindows(ledger, { scope: 'report' }),
): Promise<void> {
  const spentMicro = await ledger.spentMicro();
  const pages = renderReviewPage(mapRows(rows, reviewJob), {
    title: path.basename(request.manifest),
    generatedAt: request.generatedAt.toISOString(),
    ledger: beside(ledger.location, path.dirname(file)),
    spentMicro,
    budgetMicro: request.budgetMicro,
    pageDir: path.dirname(file),
  });
  await writeReportFile(file, pages);
}

/** A path as seen from the page's folder when it is inside it (`promo.mediabatch.db`), else whole. */
function beside(file: string, dir: string): string {
  const relative = path.relative(dir, file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}

/** What the page shows of a ledger row; the model and a prompt come from the request's parameters. */
export function reviewJob(row: JobRow): ReviewJob {
  const params = paramsOf(row);
  return {
    id: row.id,
    type: row.type,
    state: row.state,
    priceMicro: row.priceMicro,
    spentMicro: row.spentMicro,
    priceSource: row.priceSource,
    priceKey: row.priceKey,
    model: modelOf(row),
    requestId: row.requestId,
    text: row.text,
    prompt: typeof params['prompt'] === 'string' ? params['prompt'] : null,
    tags: row.tags,
    // A failure the service refunded and allows again says that a later run sends it again.
    error: failureText({ error: row.lastError, retryable: row.retryable, refunded: row.refunded }),
    output: row.resultPath,
    inManifest: row.inManifest,
  };
}

/** The model a job's parameters name, if any. */
export function modelOf(row: Pick<JobRow, 'paramsJson'>): string | null {
  const model = paramsOf(row)['model'];
  return typeof model === 'string' ? model : null;
}

function paramsOf(row: Pick<JobRow, 'paramsJson'>): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(row.paramsJson);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
