/**
 * @module Liveness recovery's decisions (domain/liveness.ts): when an idle issue is a stall to recover, when it stands
 * down, what identifies a stall, how a pass paces its recoveries per company and when the next pass is owed; the
 * liveness watch's state object, and the throttle that bounds the change dispatcher's notices to it.
 */
import {
  RECOVERY_PACE_MS,
  decideStall,
  livenessNoticeIntervalMs,
  mayEndALivePath,
  nextPassInMs,
  pacedRecoveries,
  type IdleIssue,
} from '../../domain/liveness';
import { throttleTrailing } from '../../domain/concurrency';
import { LivenessWatchEntity } from '../../workflows/liveness-watch-entity';

const NOW = 10 * 3_600_000;
const STALL = 30 * 60_000;
const idle = (overrides: Partial<IdleIssue> = {}): IdleIssue => ({
  issueId: 'i1',
  companyId: 'c1',
  assigneeAgentId: 'a1',
  lastActivityAtMs: NOW - 3_600_000,
  latestRun: null,
  ...overrides,
});
const run = (overrides: Partial<NonNullable<IdleIssue['latestRun']>> = {}) => ({
  id: 'r1',
  status: 'succeeded',
  stopKind: null,
  wakeReason: 'manual',
  ...overrides,
});

describe('decideStall', () => {
  test('idle past the threshold: recovered, the stall named by its latest run or by having none', () => {
    expect(decideStall(idle(), NOW, STALL)).toEqual({
      kind: 'recover',
      stallKey: 'never-run',
      stalledForMs: 3_600_000,
    });
    expect(decideStall(idle({ latestRun: run({ status: 'failed' }) }), NOW, STALL)).toMatchObject({
      kind: 'recover',
      stallKey: 'after-run:r1',
    });
  });

  test('idle for less than the threshold: not yet', () => {
    expect(decideStall(idle({ lastActivityAtMs: NOW - STALL + 1 }), NOW, STALL)).toEqual({ kind: 'not_yet', inMs: 1 });
    expect(decideStall(idle({ lastActivityAtMs: NOW - 60_000 }), NOW, STALL)).toEqual({
      kind: 'not_yet',
      inMs: STALL - 60_000,
    });
  });

  test.each([
    ['an operator stop', run({ status: 'cancelled', stopKind: 'operator_stop' }), 'operator_stop'],
    ['a hold stop', run({ status: 'cancelled', stopKind: 'operator_hold' }), 'operator_stop'],
    ['a recovery that did not restore a path', run({ wakeReason: 'liveness_recovery' }), 'already_recovered'],
  ])('stands down after %s, however long idle', (_what, latestRun, reason) => {
    expect(decideStall(idle({ latestRun, lastActivityAtMs: 0 }), NOW, STALL)).toEqual({ kind: 'stand_down', reason });
  });

  test('a stop for another reason is recovered', () => {
    const lost = idle({ latestRun: run({ status: 'cancelled', stopKind: 'worker_lost' }) });
    expect(decideStall(lost, NOW, STALL).kind).toBe('recover');
  });
});

describe('pacedRecoveries', () => {
  test("at most a company's share per pass, the longest stalled first, and no company waits behind another", () => {
    const due = [
      ...Array.from({ length: 5 }, (_, i) => ({ id: `big-${i}`, companyId: 'big', stalledForMs: 1_000 + i })),
      { id: 'small-0', companyId: 'small', stalledForMs: 1 },
    ];
    expect(pacedRecoveries(due, 2).map((r) => r.id)).toEqual(['big-4', 'big-3', 'small-0']);
  });
});

describe('nextPassInMs', () => {
  const notYet = (inMs: number) => ({ kind: 'not_yet' as const, inMs });
  const recovered = { kind: 'recover' as const, stallKey: 'never-run', stalledForMs: STALL };
  const stoodDown = { kind: 'stand_down' as const, reason: 'operator_stop' as const };

  test('when the first idle issue not yet stalled falls due; none waiting: no pass owed', () => {
    expect(nextPassInMs([recovered, notYet(90_000), stoodDown, notYet(5_000)], { paced: 0, truncated: false })).toBe(
      5_000,
    );
    expect(nextPassInMs([recovered, stoodDown], { paced: 0, truncated: false })).toBeNull();
    expect(nextPassInMs([], { paced: 0, truncated: false })).toBeNull();
  });

  test('a paced company, or idle issues the pass could not read, bring a pass after the pacing interval', () => {
    expect(nextPassInMs([notYet(5_000)], { paced: 3, truncated: false })).toBe(RECOVERY_PACE_MS);
    expect(nextPassInMs([], { paced: 0, truncated: true })).toBe(RECOVERY_PACE_MS);
  });

  test('never a pass right after the last: at least a second between them', () => {
    expect(nextPassInMs([notYet(3)], { paced: 0, truncated: false })).toBe(1_000);
  });
});

describe('mayEndALivePath', () => {
  test.each(['run_finished', 'issue_updated', 'tree_hold_released', 'execution_blocker_resolved', 'monitor_fired'])(
    '%s can leave an issue with no live path',
    (reason) => expect(mayEndALivePath(reason)).toBe(true),
  );
  test.each(['run_started', 'tree_hold_applied', 'interaction_created', 'monitor_set', 'watchdog_updated'])(
    '%s only adds one',
    (reason) => expect(mayEndALivePath(reason)).toBe(false),
  );
});

describe('livenessNoticeIntervalMs', () => {
  test('a sixtieth of the stall threshold, between a second and half a minute', () => {
    expect(livenessNoticeIntervalMs(30 * 60_000)).toBe(30_000);
    expect(livenessNoticeIntervalMs(10 * 60_000)).toBe(10_000);
    expect(livenessNoticeIntervalMs(3_000)).toBe(1_000);
    expect(livenessNoticeIntervalMs(24 * 3_600_000)).toBe(30_000);
  });
});

describe('LivenessWatchEntity', () => {
  test('a notice owes a pass when its issue can first be stalled; a later one never postpones an earlier one', () => {
    const watch = new LivenessWatchEntity(null, STALL);
    watch.pathsMayHaveEnded(NOW);
    expect(watch.dueAtMs).toBe(NOW + STALL);
    watch.pathsMayHaveEnded(NOW + 5_000);
    expect(watch.dueAtMs).toBe(NOW + STALL);
  });

  test('a pass answers for what was announced before it, and owes the next idle issue it found', () => {
    const watch = new LivenessWatchEntity(NOW, STALL);
    watch.passing();
    expect(watch.dueAtMs).toBeNull();
    watch.passed(NOW + 100, 7_000);
    expect(watch.dueAtMs).toBe(NOW + 7_100);
  });

  test('a notice that arrives while a pass runs still brings a pass after it, even when the pass found none', () => {
    const watch = new LivenessWatchEntity(NOW, STALL);
    watch.passing();
    watch.pathsMayHaveEnded(NOW + 50);
    watch.passed(NOW + 100, null);
    expect(watch.dueAtMs).toBe(NOW + 50 + STALL);
    watch.passed(NOW + 100, 1_000);
    expect(watch.dueAtMs).toBe(NOW + 1_100);
  });

  test('with nothing announced and nothing found, no pass is owed: the workflow completes', () => {
    const watch = new LivenessWatchEntity(NOW, STALL);
    watch.passing();
    watch.passed(NOW + 100, null);
    expect(watch.dueAtMs).toBeNull();
  });
});

describe('throttleTrailing', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test('the first request calls at once; a burst inside the interval gets one trailing call at its end', async () => {
    const calls: number[] = [];
    const throttle = throttleTrailing(
      async () => void calls.push(Date.now()),
      1_000,
      () => {},
    );
    const start = Date.now();
    throttle.request();
    expect(calls).toEqual([start]);
    for (let i = 0; i < 10; i++) {
      jest.advanceTimersByTime(50);
      throttle.request();
    }
    expect(calls).toHaveLength(1);
    jest.advanceTimersByTime(1_000);
    expect(calls).toEqual([start, start + 1_000]);
    jest.advanceTimersByTime(5_000);
    expect(calls).toHaveLength(2);
    throttle.request();
    expect(calls).toHaveLength(3);
  });

  test('a failed call is reported, and the next request calls again', async () => {
    const errors: unknown[] = [];
    let fail = true;
    let calls = 0;
    const throttle = throttleTrailing(
      async () => {
        calls++;
        if (fail) throw new Error('Temporal is unreachable');
      },
      1_000,
      (error) => errors.push(error),
    );
    throttle.request();
    await Promise.resolve();
    expect(errors).toHaveLength(1);
    fail = false;
    jest.advanceTimersByTime(1_000);
    throttle.request();
    expect(calls).toBe(2);
  });

  test('stop drops a pending trailing call', () => {
    let calls = 0;
    const throttle = throttleTrailing(
      async () => void calls++,
      1_000,
      () => {},
    );
    throttle.request();
    throttle.request();
    throttle.stop();
    jest.advanceTimersByTime(5_000);
    expect(calls).toBe(1);
  });
});
