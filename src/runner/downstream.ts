import type { JobRow } from '../store/index.js';
import type { SplitJoins } from './join-splits.js';
import type { SendFeed } from './send-feed.js';

/** A job's dependents that its result made ready to send (every input of theirs done). */
export type DependentsReady = (upstreamId: string) => Promise<readonly JobRow[]>;

/**
 * What a job's result sets off once it is recorded: the join of a split text's parts, and the
 * sends of the dependents it made ready, pushed to the send going on. With none going on they
 * wait in the ledger, ready, for the next send's walk.
 */
export class Downstream {
  readonly #joins: Pick<SplitJoins, 'partDone'>;
  readonly #dependentsReady: DependentsReady | undefined;
  #feed: SendFeed | undefined;

  /** `dependentsReady` undefined: no job of the manifest takes another's result. */
  constructor(joins: Pick<SplitJoins, 'partDone'>, dependentsReady?: DependentsReady) {
    this.#joins = joins;
    this.#dependentsReady = dependentsReady;
  }

  async done(row: Pick<JobRow, 'id' | 'parentId'>): Promise<void> {
    // The last part of a split job to finish joins them.
    if (row.parentId !== null) await this.#joins.partDone(row.parentId);
    const [feed, dependentsReady] = [this.#feed, this.#dependentsReady];
    if (feed !== undefined && !feed.ended && dependentsReady !== undefined) feed.push(await dependentsReady(row.id));
  }

  /** The send whose lanes take the dependents made ready from now on. */
  feed(feed: SendFeed | undefined): void {
    this.#feed = feed;
  }
}
