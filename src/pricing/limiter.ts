/** Runs at most `concurrency` tasks at once; the rest wait in order. State lives in the closure. */
export function createLimiter(concurrency: number): <T>(task: () => Promise<T>) => Promise<T> {
  const limit = Math.max(1, Math.floor(concurrency));
  let active = 0;
  const waiting: (() => void)[] = [];

  // A finishing task hands its slot straight to the next waiter, so a caller arriving in
  // between can never slip in and push the count over the limit.
  const release = (): void => {
    const next = waiting.shift();
    if (next === undefined) active -= 1;
    else next();
  };

  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else active += 1;
    try {
      return await task();
    } finally {
      release();
    }
  };
}
