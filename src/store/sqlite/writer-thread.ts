/**
 * The ledger writer's thread (see thread-writer.ts). It holds its own connection to the ledger
 * and commits what the run asks for: every batch waiting when it becomes free joins one
 * transaction, so the longer a commit takes, the more the next one carries.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { openLedger, type Ledger } from './ledger.js';
import { commitCalls, toSentError, type SentError } from './writer.js';
import type { ThreadReply, ThreadRequest } from './thread-writer.js';

const port = parentPort as MessagePort;
const { path } = workerData as { path: string };

let ledger: Ledger | undefined;
let openFailure: SentError | undefined;
try {
  ledger = openLedger(path);
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
    ledger?.close();
    port.close();
  }
});

function commitAll(batches: Extract<ThreadRequest, { seq: number }>[]): ThreadReply[] {
  if (batches.length === 0) return [];
  if (ledger === undefined) return batches.map(({ seq }) => ({ seq, failure: openFailure as SentError }));
  try {
    const outcomes = commitCalls(ledger, batches.flatMap((b) => b.calls));
    let at = 0;
    return batches.map(({ seq, calls }) => {
      const mine = outcomes.slice(at, at + calls.length);
      at += calls.length;
      return { seq, outcomes: mine };
    });
  } catch (error) {
    const failure = toSentError(error);
    return batches.map(({ seq }) => ({ seq, failure }));
  }
}
