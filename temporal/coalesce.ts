/**
 * Per-key single flight with one trailing call. While a call for a key is in flight, every later
 * request for that key shares one follow-up call, started when the flight settles (fulfilled or
 * not). Each caller's promise settles with a call that started after the caller asked, so no
 * request is skipped, and a burst of n requests costs two calls instead of n.
 *
 * The follow-up runs with the arguments of the first request that queued it: use it only where
 * requests for one key differ in nothing that matters (a "something changed" signal).
 */
export function coalescePerKey<A extends unknown[]>(
  call: (...args: A) => Promise<void>,
  keyOf: (...args: A) => string,
): (...args: A) => Promise<void> {
  const running = new Map<string, Promise<void>>();
  const queued = new Map<string, Promise<void>>();
  return (...args: A) => {
    const key = keyOf(...args);
    const followUp = queued.get(key);
    if (followUp) return followUp;
    const start = () => {
      queued.delete(key);
      const flight = call(...args);
      running.set(key, flight);
      const settle = () => {
        if (running.get(key) === flight) running.delete(key);
      };
      flight.then(settle, settle);
      return flight;
    };
    const inFlight = running.get(key);
    if (!inFlight) return start();
    const next = inFlight.then(start, start);
    queued.set(key, next);
    return next;
  };
}
