import { JOB_STATES, type JobState } from '../../../src/jobs/states.js';
import type { CostRow, FollowRow, JobPick, JobQuery, JobRow, KeyPrice, PriceGroupRow, SendSelection } from '../../../src/store/ledger.js';
import { isReady } from './graph.js';
import { appendEvent, byPlace, globMatcher, inScope, manifestOrder, picker, placeOf, sender, toRow, type JobTest, type MemoryData, type MemoryJob } from './data.js';

/** The conditions of a query (ledger.ts: JobQuery) as one test. */
function queryTest(data: MemoryData, query: Omit<JobQuery, 'limit' | 'after'>): JobTest {
  const tests: JobTest[] = [(job) => inScope(job, query.scope)];
  const { states, types, send, pick, failedAfter, issue, through, ready } = query;
  if (ready === true) tests.push(isReady(data));
  if (through !== undefined) tests.push((job) => job.manifestIndex <= through);
  if (states !== undefined) tests.push((job) => states.includes(job.state));
  if (types !== undefined) tests.push((job) => types.includes(job.type));
  if (send !== undefined) tests.push(sender(send));
  if (pick !== undefined) tests.push(picker(pick));
  if (issue !== undefined) tests.push((job) => job.state === 'submitted' && job.issue === issue);
  if (failedAfter !== undefined) {
    const failed = new Set(data.events.filter((e) => e.id > failedAfter && e.kind === 'failed').map((e) => e.jobId));
    tests.push((job) => job.state === 'failed' && failed.has(job.id));
  }
  return (job) => tests.every((test) => test(job));
}

export function readJobs(data: MemoryData, query: JobQuery): JobRow[] {
  const order = manifestOrder(data);
  const test = queryTest(data, query);
  const flag = query.flagSend === undefined ? undefined : sender(query.flagSend);
  const rows: JobRow[] = [];
  // A window starts after its cursor (a binary search), and costs its own size.
  let i = 0;
  if (query.after !== undefined) {
    for (let high = order.length; i < high; ) {
      const middle = (i + high) >> 1;
      if (byPlace(placeOf(order[middle]!), query.after) <= 0) i = middle + 1;
      else high = middle;
    }
  }
  for (; i < order.length && rows.length < query.limit; i += 1) {
    const job = order[i]!;
    if (test(job)) rows.push(toRow(job, flag?.(job)));
  }
  return rows;
}

export const countJobs = (data: MemoryData, query: Omit<JobQuery, 'after' | 'limit'>): number => {
  const test = queryTest(data, query);
  return [...data.jobs.values()].filter(test).length;
};

export const readFollowing = (data: MemoryData, afterSeq: number, limit: number): FollowRow[] =>
  [...data.jobs.values()]
    .filter((job) => job.state === 'submitted' && job.requestId !== null && job.followSeq !== null && job.followSeq > afterSeq)
    .sort((a, b) => a.followSeq! - b.followSeq!)
    .slice(0, limit)
    .map((job) => ({ id: job.id, type: job.type, requestId: job.requestId!, paramsJson: job.paramsJson, followSeq: job.followSeq!, submittedAt: job.submittedAt }));

// Parents compare ignoring case, as ids do.
const listedParts = (data: MemoryData): MemoryJob[] => [...data.jobs.values()].filter((job) => job.inManifest && job.parentId !== null);

export const readParts = (data: MemoryData, parentId: string): JobRow[] =>
  listedParts(data)
    .filter((job) => job.parentId!.toLowerCase() === parentId.toLowerCase())
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((job) => toRow(job));

export function splitsDone(data: MemoryData, afterId: string, limit: number): string[] {
  const splits = new Map<string, { parentId: string; done: boolean }>();
  for (const job of listedParts(data)) {
    const key = job.parentId!.toLowerCase();
    const split = splits.get(key) ?? { parentId: job.parentId!, done: true };
    if (job.parentId! < split.parentId) split.parentId = job.parentId!;
    split.done &&= job.state === 'done';
    splits.set(key, split);
  }
  return [...splits]
    .filter(([key, split]) => split.done && key > afterId.toLowerCase())
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .slice(0, limit)
    .map(([, split]) => split.parentId);
}

export function priceGroups(data: MemoryData, send: SendSelection): PriceGroupRow[] {
  const groups = new Map<string, PriceGroupRow & { byLength: Map<number | null, number> }>();
  for (const job of manifestOrder(data).filter(sender(send))) {
    const key = job.groupKey ?? '';
    const group = groups.get(key) ?? { groupKey: key, type: job.type, paramsJson: job.paramsJson, jobs: 0, lengths: [], byLength: new Map() };
    group.jobs += 1;
    group.byLength.set(job.textChars, (group.byLength.get(job.textChars) ?? 0) + 1);
    groups.set(key, group);
  }
  return [...groups.values()]
    .sort((a, b) => (a.groupKey < b.groupKey ? -1 : 1))
    .map(({ byLength, ...group }) => ({
      ...group,
      lengths: [...byLength].filter(([chars]) => chars !== null).map(([chars, jobs]) => ({ chars: chars!, jobs })).sort((a, b) => a.chars - b.chars),
    }));
}

export function applyPrices(data: MemoryData, prices: readonly KeyPrice[], send: SendSelection, now: string): void {
  for (const price of prices) {
    if (!Number.isSafeInteger(price.priceMicro) || price.priceMicro < 0) {
      throw new Error(`bug in mediabatch: price key ${price.priceKey} was priced at ${price.priceMicro} µUSD, not a whole number of micro-dollars`);
    }
  }
  const byKey = new Map(prices.map((price) => [price.priceKey, price]));
  const selected = sender(send);
  for (const job of data.jobs.values()) {
    const price = job.priceKey === null ? undefined : byKey.get(job.priceKey);
    if (price === undefined || !selected(job)) continue;
    Object.assign(job, { priceMicro: price.priceMicro, priceSource: price.source, updatedAt: now });
    data.counters.jobsVersion += 1;
  }
}

export function costRows(data: MemoryData, send: SendSelection, only?: 'to_send'): CostRow[] {
  const selected = sender(send);
  const lines = new Map<string, CostRow>();
  for (const job of data.jobs.values()) {
    const toSend = selected(job);
    if (!job.inManifest || (only === 'to_send' && !toSend)) continue;
    const model = (JSON.parse(job.paramsJson) as { model?: string }).model ?? null;
    const key = JSON.stringify([job.type, model, job.groupKey, job.priceSource, toSend]);
    const line = lines.get(key) ?? { type: job.type, model, groupKey: job.groupKey, priceSource: job.priceSource, toSend, jobs: 0, priceMicro: 0, unpriced: 0 };
    line.jobs += 1;
    line.priceMicro += job.priceMicro ?? 0;
    line.unpriced += job.priceMicro === null ? 1 : 0;
    lines.set(key, line);
  }
  return [...lines.values()];
}

/** --partial's cut, as markSkipped would write it job by job (ledger.ts: skipAfter). */
export function skipAfter(data: MemoryData, after: number, send: SendSelection, reason: string, now: string): { leftOut: number; skipped: number } {
  const left = manifestOrder(data).filter((job) => job.manifestIndex > after).filter(sender(send));
  let skipped = 0;
  for (const job of left) {
    const to: JobState = job.state === 'pending' ? 'skipped' : job.state;
    appendEvent(data, now, job.id, to === job.state ? 'not_sent' : 'skipped', job.state, to, { reason, spentMicro: job.spentMicro });
    if (to === job.state) continue;
    Object.assign(job, { state: to, lastError: reason, updatedAt: now });
    data.counters.jobsVersion += 1;
    skipped += 1;
  }
  return { leftOut: left.length, skipped };
}

export function unmatchedPicks(data: MemoryData, pick: JobPick): { only: string[]; tags: string[] } {
  const listed = [...data.jobs.values()].filter((job) => job.inManifest);
  return {
    only: (pick.only ?? []).map((pattern) => ({ pattern, match: globMatcher(pattern) })).filter(({ match }) => !listed.some((job) => match(job.id))).map(({ pattern }) => pattern),
    tags: (pick.tags ?? []).filter((tag) => !listed.some((job) => job.tags.includes(tag))),
  };
}

export function countsByState(data: MemoryData, scope: JobQuery['scope'] = 'all'): Record<JobState, number> {
  const counts = Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as Record<JobState, number>;
  for (const job of data.jobs.values()) if (inScope(job, scope)) counts[job.state] += 1;
  return counts;
}

export const spentMicro = (data: MemoryData): number => [...data.jobs.values()].reduce((sum, job) => sum + job.spentMicro, 0);
