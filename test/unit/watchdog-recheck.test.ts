/**
 * @module Unit: conditional acceptance (domain/watchdog-recheck.ts): what an evaluation does with the reviewed stop
 * (accepted, re-checked, escalated), which dispositions may carry `recheckAfter`, and its bounds.
 */
import { notificationFor } from '../../domain/notifications';
import { acceptsStop, recheckAfterProblem, recheckDecision, type AcceptanceState } from '../../domain/watchdog-recheck';

const NOW = new Date('2026-12-01T12:00:00.000Z');
const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs);
const state = (overrides: Partial<AcceptanceState> = {}): AcceptanceState => ({
  acceptedUntil: null,
  recheckCount: 0,
  repeatLimit: 3,
  escalatedFingerprint: null,
  ...overrides,
});

describe('recheckDecision', () => {
  test('a stop accepted for good is reviewed: nothing to do until it changes', () => {
    expect(recheckDecision('fp', state(), NOW)).toEqual({ kind: 'reviewed' });
  });

  test('a stop accepted until later waits for its re-check then', () => {
    expect(recheckDecision('fp', state({ acceptedUntil: at(5_000) }), NOW)).toEqual({
      kind: 'accepted',
      recheckAt: at(5_000),
    });
  });

  test('a due acceptance with re-checks left re-arms, numbering the re-checks from 1', () => {
    expect(recheckDecision('fp', state({ acceptedUntil: NOW }), NOW)).toEqual({ kind: 'recheck', number: 1 });
    const second = state({ acceptedUntil: at(-1), recheckCount: 1, repeatLimit: 2 });
    expect(recheckDecision('fp', second, NOW)).toEqual({ kind: 'recheck', number: 2 });
  });

  test('a due acceptance whose re-checks ran out escalates; a limit of 0 escalates at the first', () => {
    expect(recheckDecision('fp', state({ acceptedUntil: at(-1), recheckCount: 3 }), NOW)).toEqual({
      kind: 'escalate',
    });
    expect(recheckDecision('fp', state({ acceptedUntil: at(-1), repeatLimit: 0 }), NOW)).toEqual({
      kind: 'escalate',
    });
  });

  test('an escalated stop stays escalated, whatever its acceptance; another stop is decided afresh', () => {
    const escalated = state({ acceptedUntil: at(-1), recheckCount: 3, escalatedFingerprint: 'fp' });
    expect(recheckDecision('fp', escalated, NOW)).toEqual({ kind: 'escalated' });
    expect(recheckDecision('other', escalated, NOW)).toEqual({ kind: 'escalate' });
  });
});

test('only done, or in_review handed to someone else, accepts a stop', () => {
  expect(acceptsStop('done', 'agent-watchdog', 'agent-watchdog')).toBe(true);
  expect(acceptsStop('in_review', 'agent-reviewer', 'agent-watchdog')).toBe(true);
  expect(acceptsStop('in_review', 'agent-watchdog', 'agent-watchdog')).toBe(false);
  for (const status of ['blocked', 'todo', 'in_progress', 'cancelled'])
    expect(acceptsStop(status, null, 'agent-watchdog')).toBe(false);
});

test('recheckAfter is refused under 1 second or over 90 days ahead, naming the bound', () => {
  expect(recheckAfterProblem(at(1_000), NOW)).toBeNull();
  expect(recheckAfterProblem(at(90 * 86_400_000), NOW)).toBeNull();
  expect(recheckAfterProblem(at(999), NOW)).toContain('at least 1 second');
  expect(recheckAfterProblem(at(-60_000), NOW)).toContain('at least 1 second');
  expect(recheckAfterProblem(at(90 * 86_400_000 + 1), NOW)).toContain('at most 90 days');
});

test('an escalation notifies watchdog_escalated once per stop, apart from its watchdog_stopped', () => {
  const details = { watchdogId: 'w1', stopFingerprint: 'fp', interactionId: 'i1', recheckCount: 1, repeatLimit: 1 };
  const write = { entityType: 'issue', entityId: 'root', details, recordId: 'r1' };
  const escalated = notificationFor({ ...write, action: 'issue.task_watchdog_escalated' });
  const stopped = notificationFor({ ...write, action: 'issue.task_watchdog_triggered' });
  expect(escalated).toMatchObject({ event: 'new_blocker', kind: 'watchdog_escalated', subject: 'task-watchdog:w1' });
  expect(escalated!.data).toMatchObject({ interactionId: 'i1', watchedIssueId: 'root', fingerprint: 'fp' });
  expect(escalated!.stateVersion).not.toBe(stopped!.stateVersion);
  // a repeat of the same escalation (another audit record) is the same fact
  expect(notificationFor({ ...write, recordId: 'r2', action: 'issue.task_watchdog_escalated' })!.stateVersion).toBe(
    escalated!.stateVersion,
  );
});
