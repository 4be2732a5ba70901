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

/**
 * Calls `call` after every `request()`, at most once per `intervalMs`: a request inside the interval is served by
 * one trailing call at its end, so no request goes unanswered and a burst costs one call. A failed call goes to
 * `onError` (the next request tries again). `stop()` drops a pending trailing call.
 */
export function throttleTrailing(
  call: () => Promise<void>,
  intervalMs: number,
  onError: (error: unknown) => void,
): { request(): void; stop(): void } {
  let lastCallAt = -Infinity;
  let trailing: ReturnType<typeof setTimeout> | null = null;
  const fire = () => {
    trailing = null;
    lastCallAt = Date.now();
    call().catch(onError);
  };
  return {
    request() {
      if (trailing) return;
      const wait = lastCallAt + intervalMs - Date.now();
      if (wait <= 0) fire();
      else trailing = setTimeout(fire, wait);
    },
    stop() {
      if (trailing) clearTimeout(trailing);
      trailing = null;
    },
  };
}
