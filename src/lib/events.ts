/**
 * A run's events for any number of readers: each `for await` over `events` gets every event from
 * the moment it starts reading until the run ends, queued while its body awaits; a run nobody
 * reads from keeps none. Reading starts before the run's first event when the loop begins in
 * the same turn as the call (the run starts on the next one).
 */
export class EventFeed<T> implements AsyncIterable<T> {
  readonly #readers = new Set<{ queue: T[]; wake: (() => void) | undefined }>();
  #ended = false;

  push(event: T): void {
    for (const reader of this.#readers) {
      reader.queue.push(event);
      reader.wake?.();
    }
  }

  end(): void {
    this.#ended = true;
    for (const reader of this.#readers) reader.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    const reader: { queue: T[]; wake: (() => void) | undefined } = { queue: [], wake: undefined };
    this.#readers.add(reader);
    try {
      for (;;) {
        const event = reader.queue.shift();
        if (event !== undefined) yield event;
        else if (this.#ended) return;
        else await new Promise<void>((resolve) => (reader.wake = resolve));
      }
    } finally {
      this.#readers.delete(reader);
    }
  }
}
