/**
 * Runs `work` over `items` with at most `limit` in flight. Fan-outs (a pause stopping a thousand
 * runs, a release resuming them) are round-trip bound: a few at once cut the wall time without
 * flooding the database pool. The first failure is rethrown after the others settle.
 */
export async function forEachConcurrently<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++];
      await work(item).catch((error: unknown) => void failures.push(error));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failures.length > 0) throw failures[0];
}

/** In-flight limit for member fan-outs; below the pool size (10) so other work still gets connections. */
export const FAN_OUT_CONCURRENCY = 6;
