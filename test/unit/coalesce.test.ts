/**
 * @module Unit: per-key single flight with one trailing call (temporal/coalesce.ts). Every call is a
 * deferred promise the test settles by hand; the log records asks, call starts, settlements and what
 * each caller got, so ordering is asserted from what happened, never from timing.
 */
import { coalescePerKey } from '../../temporal/coalesce';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface Call {
  n: number;
  key: string;
  /** the caller whose arguments the call runs with */
  caller: string;
  /** calls for the same key still unsettled when this one started */
  concurrent: number;
  deferred: Deferred;
}

/**
 * Drains the microtask queue far deeper than coalescePerKey ever chains (two or three promise hops),
 * so "nothing more happened" is a fact of the code, not of a clock. No timer, no wall time.
 */
async function drainMicrotasks() {
  for (let i = 0; i < 50; i++) await Promise.resolve();
}

function harness() {
  const log: string[] = [];
  const calls: Call[] = [];
  const unsettled = new Map<string, number>();
  const startWaiters: { n: number; resolve: () => void }[] = [];

  const run = coalescePerKey(
    (key: string, caller: string) => {
      const call: Call = {
        n: calls.length + 1,
        key,
        caller,
        concurrent: unsettled.get(key) ?? 0,
        deferred: deferred(),
      };
      calls.push(call);
      unsettled.set(key, call.concurrent + 1);
      log.push(`start ${call.n}`);
      for (const w of startWaiters.filter((w) => w.n <= calls.length)) w.resolve();
      return call.deferred.promise;
    },
    (key) => key,
  );

  /** One request, as a caller named `who` makes it; what it gets is logged as `<who> ok|<message>`. */
  const ask = (who: string, key = 'k') => {
    log.push(`ask ${who}`);
    const promise = run(key, who);
    promise.then(
      () => log.push(`${who} ok`),
      (error: Error) => log.push(`${who} ${error.message}`),
    );
    return promise;
  };

  const finish = (n: number, error?: Error) => {
    const call = calls[n - 1];
    unsettled.set(call.key, unsettled.get(call.key)! - 1);
    log.push(`end ${n}`);
    if (error) call.deferred.reject(error);
    else call.deferred.resolve();
  };

  /** Resolves once the n-th call has started (immediately if it has). */
  const started = (n: number) =>
    new Promise<void>((resolve) => {
      if (calls.length >= n) resolve();
      else startWaiters.push({ n, resolve });
    });

  /** Resolves when every promise has settled, fulfilled or not. */
  const settled = (promises: Promise<void>[]) => Promise.allSettled(promises).then(() => undefined);

  /** The caller's promise settled after a call ended that had started after the caller asked. */
  const servedByLaterCall = (who: string) => {
    const asked = log.indexOf(`ask ${who}`);
    const answered = log.findIndex((e) => e.startsWith(`${who} `));
    expect(asked).toBeGreaterThanOrEqual(0);
    expect(answered).toBeGreaterThan(asked);
    const served = calls.some((c) => {
      const start = log.indexOf(`start ${c.n}`);
      const end = log.indexOf(`end ${c.n}`);
      return start > asked && end >= 0 && end < answered;
    });
    expect({ who, served }).toEqual({ who, served: true });
  };

  return { log, calls, ask, finish, started, settled, servedByLaterCall };
}

test('a single request starts its call at once and settles with it', async () => {
  const h = harness();
  const p = h.ask('a');
  expect(h.calls).toHaveLength(1); // synchronously, before any await
  expect(h.calls[0]).toMatchObject({ key: 'k', caller: 'a' });
  h.finish(1);
  await p;
  expect(h.log).toEqual(['ask a', 'start 1', 'end 1', 'a ok']);
});

test('requests during a flight share exactly one follow-up, started only after the flight settles', async () => {
  const h = harness();
  const first = h.ask('a');
  const burst = ['b', 'c', 'd', 'e', 'f'].map((who) => h.ask(who));
  await drainMicrotasks();
  expect(h.calls).toHaveLength(1); // nothing started while call 1 is in flight
  expect(h.log.filter((e) => e.endsWith(' ok'))).toEqual([]); // and no request of the burst was answered by it

  h.finish(1);
  await h.started(2);
  expect(h.calls[1]).toMatchObject({ key: 'k', caller: 'b', concurrent: 0 }); // the first queued request's arguments; call 1 was over
  expect(h.log.indexOf('start 2')).toBeGreaterThan(h.log.indexOf('end 1'));
  await first;
  await drainMicrotasks();
  expect(h.log.filter((e) => /^[b-f] /.test(e))).toEqual([]); // the burst waits for the follow-up

  h.finish(2);
  await h.settled([first, ...burst]);
  await drainMicrotasks();
  expect(h.calls).toHaveLength(2); // n + 1 requests, two calls
  for (const who of ['a', 'b', 'c', 'd', 'e', 'f']) h.servedByLaterCall(who);
});

test('a request made while the follow-up runs is not answered by it: it gets a follow-up of its own', async () => {
  const h = harness();
  const requests = [h.ask('a'), h.ask('b')];
  h.finish(1);
  await h.started(2);
  requests.push(h.ask('c'), h.ask('d'));
  await drainMicrotasks();
  expect(h.calls).toHaveLength(2);
  h.finish(2);
  await h.started(3);
  expect(h.calls[2]).toMatchObject({ caller: 'c', concurrent: 0 });
  h.finish(3);
  await h.settled(requests);
  expect(h.calls).toHaveLength(3);
  for (const who of ['a', 'b', 'c', 'd']) h.servedByLaterCall(who);
  expect(h.log.indexOf('c ok')).toBeGreaterThan(h.log.indexOf('end 3'));
});

test('a request made as the flight settles, from the first caller’s own continuation, is still served by a later call', async () => {
  const h = harness();
  let late: Promise<void> | undefined;
  const first = h.ask('a').then(() => {
    late = h.ask('late');
  });
  const b = h.ask('b');
  h.finish(1);
  await first;
  await h.started(2);
  h.finish(2);
  await drainMicrotasks();
  if (h.calls.length === 3) h.finish(3); // whether `late` joined call 2 or queued a third is ordering detail; both serve it
  await h.settled([b, late!]);
  for (const who of ['a', 'b', 'late']) h.servedByLaterCall(who);
  expect(h.calls.every((c) => c.concurrent === 0)).toBe(true);
});

test.each([
  ['the flight fails and the follow-up succeeds', new Error('flight failed'), undefined, 'ok'],
  ['the flight succeeds and the follow-up fails', undefined, new Error('follow-up failed'), 'follow-up failed'],
  ['both fail', new Error('flight failed'), new Error('follow-up failed'), 'follow-up failed'],
])(
  "%s: the follow-up still runs, and its callers get the follow-up's result",
  async (_case, flightError, followUpError, followUpOutcome) => {
    const h = harness();
    const first = h.ask('a');
    const burst = [h.ask('b'), h.ask('c')];
    h.finish(1, flightError);
    await h.started(2);
    expect(h.calls[1]).toMatchObject({ caller: 'b', concurrent: 0 });
    h.finish(2, followUpError);
    await h.settled([first, ...burst]);
    expect(h.log).toContain(`a ${flightError ? 'flight failed' : 'ok'}`);
    expect(h.log).toContain(`b ${followUpOutcome}`);
    expect(h.log).toContain(`c ${followUpOutcome}`);
    expect(h.calls).toHaveLength(2);
  },
);

test('different keys do not coalesce: each runs at once, side by side', async () => {
  const h = harness();
  const x = h.ask('x', 'key-x');
  const y = h.ask('y', 'key-y');
  const x2 = h.ask('x2', 'key-x');
  expect(h.calls.map((c) => [c.key, c.caller])).toEqual([
    ['key-x', 'x'],
    ['key-y', 'y'],
  ]);
  h.finish(2); // y ends while x is still in flight
  await y;
  await drainMicrotasks();
  expect(h.calls).toHaveLength(2); // y's end does not start x's follow-up
  h.finish(1);
  await h.started(3);
  expect(h.calls[2]).toMatchObject({ key: 'key-x', caller: 'x2', concurrent: 0 });
  h.finish(3);
  await h.settled([x, x2]);
  for (const who of ['x', 'y', 'x2']) h.servedByLaterCall(who);
});

test('after everything has settled, a new request starts a fresh call at once', async () => {
  const h = harness();
  const burst = [h.ask('a'), h.ask('b'), h.ask('c')];
  h.finish(1);
  await h.started(2);
  h.finish(2);
  await h.settled(burst);
  await drainMicrotasks();
  expect(h.calls).toHaveLength(2);

  const again = h.ask('d');
  expect(h.calls).toHaveLength(3); // synchronously: no flight or follow-up was left behind for the key
  expect(h.calls[2]).toMatchObject({ caller: 'd', concurrent: 0 });
  h.finish(3);
  await again;
  h.servedByLaterCall('d');
});

test('a fresh call also starts at once after a failed flight with no follow-up', async () => {
  const h = harness();
  const failing = h.ask('a');
  h.finish(1, new Error('boom'));
  await expect(failing).rejects.toThrow('boom');
  await drainMicrotasks();
  const again = h.ask('b');
  expect(h.calls).toHaveLength(2);
  h.finish(2);
  await again;
});
