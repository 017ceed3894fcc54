/**
 * The ledger's writer thread (see thread-committer.ts). It holds its own connection to the
 * ledger and commits what the run asks for: every batch waiting when it becomes free joins one
 * transaction, so the longer a commit takes, the more the next one carries.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { commitChanges } from './changes.js';
import { openCore, type SqliteCore } from './core.js';
import { toSentError, type SentError } from './sent-error.js';
import type { SentOutcome, ThreadReply, ThreadRequest } from './thread-committer.js';

const port = parentPort as MessagePort;
const { path } = workerData as { path: string };

let core: SqliteCore | undefined;
let openFailure: SentError | undefined;
try {
  core = openCore(path, { readonly: false, use: 'writer' });
} catch (error) {
  openFailure = toSentError(error);
}

port.on('message', (first: ThreadRequest) => {
  const requests = [first];
  for (let next = receiveMessageOnPort(port); next !== undefined; next = receiveMessageOnPort(port)) {
    requests.push(next.message as ThreadRequest);
  }
  const batches = requests.filter((r): r is Extract<ThreadRequest, { seq: number }> => 'seq' in r);
  for (const reply of commitAll(batches)) port.postMessage(reply);
  if (requests.some((r) => 'close' in r)) {
    core?.close();
    port.close();
  }
});

function commitAll(batches: Extract<ThreadRequest, { seq: number }>[]): ThreadReply[] {
  if (batches.length === 0) return [];
  if (core === undefined) return batches.map(({ seq }) => ({ seq, failure: openFailure as SentError }));
  try {
    const outcomes: SentOutcome[] = commitChanges(core, batches.flatMap((b) => b.changes)).map((o) =>
      o.ok ? o : { ok: false, error: toSentError(o.error) },
    );
    let at = 0;
    return batches.map(({ seq, changes }) => {
      const mine = outcomes.slice(at, at + changes.length);
      at += changes.length;
      return { seq, outcomes: mine };
    });
  } catch (error) {
    const failure = toSentError(error);
    return batches.map(({ seq }) => ({ seq, failure }));
  }
}
