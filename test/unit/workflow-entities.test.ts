/**
 * @module The state objects of the entity workflows, without Temporal: a tree hold's (workflows/tree-hold-entity.ts)
 * and a task watchdog's (workflows/watchdog-entity.ts). Their handlers only record here and the main loops act on
 * what these say, so each transition a signal, an update or an activity's result makes is checked here.
 */
import { isHoldNotActive, type ResumeReport } from '../../domain/hold-contract';
import type { EvaluationSummary } from '../../domain/watchdog';
import { TreeHoldEntity } from '../../workflows/tree-hold-entity';
import { WatchdogEntity } from '../../workflows/watchdog-entity';

const report = (resumed: number, wakeFailures: number): ResumeReport =>
  ({
    resumed: Array.from({ length: resumed }, (_, i) => ({ runId: `r${i}` })),
    skipped: [],
    wakeFailures: Array.from({ length: wakeFailures }, (_, i) => ({ runId: `f${i}` })),
  }) as unknown as ResumeReport;

describe('TreeHoldEntity', () => {
  const applied = { holdId: 'h1', memberCount: 3, interruptedRunIds: ['a', 'b'] };

  test('the first release wins; a retry of it carries on and any other is refused as not active', () => {
    const hold = new TreeHoldEntity(TreeHoldEntity.initialState('h1'));
    expect(() => hold.validateRelease({ releaseId: 'one' })).not.toThrow();
    hold.releaseAccepted({ releaseId: 'one' });
    expect(() => hold.validateRelease({ releaseId: 'one' })).not.toThrow();
    let refusal: unknown;
    try {
      hold.validateRelease({ releaseId: 'two' });
    } catch (error) {
      refusal = error;
    }
    expect(isHoldNotActive(refusal)).toBe(true);
  });

  test('applied, then released: settled, with the release counted for the UI', () => {
    const hold = new TreeHoldEntity(TreeHoldEntity.initialState('h1'));
    expect(hold.isApplied).toBe(false);
    hold.pauseApplied(applied);
    expect(hold.isApplied).toBe(true);
    expect(hold.activeDetails()).toBe('active: 3 issues paused, 2 runs interrupted; waiting for a release');
    expect(hold.isSettled).toBe(false);
    hold.released(report(2, 1));
    expect(hold.isSettled).toBe(true);
    expect(hold.releasedDetails()).toBe('released: 2 resumed, 0 skipped, 1 wake failures');
  });

  test('released outside the workflow: settled, owing nothing', () => {
    const hold = new TreeHoldEntity(TreeHoldEntity.initialState('h1'));
    hold.pauseApplied(applied);
    hold.releasedOutside();
    expect(hold.isSettled).toBe(true);
    expect(hold.owesResumes).toBe(false);
    expect(hold.releasedDetails()).toMatch(/^released outside this workflow/);
  });

  test('failed resume wakes are owed retries until none fails, and the retries are bounded', () => {
    const hold = new TreeHoldEntity(TreeHoldEntity.initialState('h1'));
    hold.pauseApplied(applied);
    hold.released(report(1, 2));
    hold.owesRetries(true);
    expect(hold.owesResumes).toBe(true);
    hold.retried(report(1, 1));
    expect(hold.state).toMatchObject({ resumeRetries: 1, pendingWakeFailures: 1 });
    expect(hold.retriedDetails(report(1, 1))).toBe('released: 1 resumed after 1 retries, 1 wake failures left');
    expect(hold.retriesExhausted(2)).toBe(false);
    hold.retried(report(0, 1));
    expect(hold.retriesExhausted(2)).toBe(true);
    expect(hold.exhaustedMessage()).toBe('1 resume wakes still failing after 2 retries');
    hold.retried(report(1, 0));
    expect(hold.owesResumes).toBe(false);
  });

  test('an execution from before retry-failed-resume-wakes owes no retries', () => {
    const hold = new TreeHoldEntity(TreeHoldEntity.initialState('h1'));
    hold.released(report(0, 3));
    hold.owesRetries(false);
    expect(hold.owesResumes).toBe(false);
  });
});

describe('WatchdogEntity', () => {
  const evaluation = (overrides: Partial<EvaluationSummary> = {}): EvaluationSummary =>
    ({
      state: 'live',
      includedCount: 4,
      stoppedLeafCount: 0,
      woke: false,
      evaluatedAt: '2026-12-07T12:00:00.000Z',
      ...overrides,
    }) as EvaluationSummary;
  const fresh = () => new WatchdogEntity(WatchdogEntity.initialState('w1', 'i1'));

  test('a new watchdog evaluates once at start; the evaluation covers the changes received before it', () => {
    const watchdog = fresh();
    expect(watchdog.needsAttention()).toBe(true);
    watchdog.changed({ watchdogId: 'w1', reason: 'issue_updated' });
    expect(watchdog.state).toMatchObject({ pendingChanges: 2, changesReceived: 1 });
    watchdog.beginEvaluation();
    watchdog.recordEvaluation(evaluation());
    expect(watchdog.needsAttention()).toBe(false);
    expect(watchdog.state.evaluations).toBe(1);
    expect(watchdog.describe()).toBe('live: 4 issues, 0 stopped leaves (evaluation 1, 2026-12-07T12:00:00.000Z)');
  });

  test('a signal of a newer watchdog of the issue makes it the successor: the run hands over instead of acting', () => {
    const watchdog = fresh();
    watchdog.beginEvaluation();
    watchdog.removalSignalled({ watchdogId: 'w1' });
    watchdog.changed({ watchdogId: 'w2', reason: 'watchdog_created' });
    expect(watchdog.successorId).toBe('w2');
    expect(watchdog.takeRemovalRequest()).toBe(false);
    expect(watchdog.nextRun()).toEqual({ watchdogId: 'w2', carried: undefined });
  });

  test("a removal for this watchdog is confirmed once; another watchdog's removal changes nothing", () => {
    const watchdog = fresh();
    watchdog.beginEvaluation();
    watchdog.removalSignalled({ watchdogId: 'other' });
    expect(watchdog.needsAttention()).toBe(false);
    watchdog.removalSignalled({ watchdogId: 'w1' });
    expect(watchdog.takeRemovalRequest()).toBe(true);
    expect(watchdog.takeRemovalRequest()).toBe(false);
    watchdog.confirmRemoved();
    expect(watchdog.describe()).toBe('removed after 0 evaluations');
    expect(watchdog.nextRun()).toEqual({ carried: watchdog.state });
  });

  test('a safety tick is cheap after a settled evaluation, not while a first-run grace or an incomplete read waits', () => {
    const watchdog = fresh();
    expect(watchdog.tickMayBeCheap()).toBe(false);
    watchdog.recordEvaluation(evaluation({ state: 'pending_first_run' }));
    expect(watchdog.tickMayBeCheap()).toBe(false);
    watchdog.recordEvaluation(evaluation({ state: 'stopped' }));
    expect(watchdog.tickMayBeCheap()).toBe(true);
    watchdog.recordUnchangedTick();
    expect(watchdog.state.unchangedTicks).toBe(1);
  });

  test('the next wait: the tick, or sooner for a first-run grace, or (patched) for a re-check of an accepted stop', () => {
    const watchdog = fresh();
    const soon = new Date(Date.now() + 60_000).toISOString();
    expect(watchdog.nextWait(300_000, true).ms).toBe(300_000);
    watchdog.recordEvaluation(evaluation({ state: 'pending_first_run', recheckAt: soon }));
    expect(watchdog.nextWait(300_000, true).ms).toBeLessThanOrEqual(60_000);
    watchdog.recordEvaluation(evaluation({ state: 'already_reviewed', recheckAt: soon }));
    expect(watchdog.awaitsRecheck()).toBe(true);
    expect(watchdog.nextWait(300_000, true).summary).toContain(`re-check at ${soon}`);
    expect(watchdog.nextWait(300_000, false).ms).toBe(300_000);
  });

  test('an evaluation finding the watchdog removed ends it', () => {
    const watchdog = fresh();
    watchdog.recordEvaluation(evaluation({ state: 'removed' }));
    expect(watchdog.state.removed).toBe(true);
    expect(watchdog.needsAttention()).toBe(true);
  });
});
