/**
 * @module Liveness recovery's decisions (domain/liveness.ts): when an idle issue is a stall to recover, when it stands
 * down, what identifies a stall, and how a pass paces its recoveries per company.
 */
import { decideStall, pacedRecoveries, type IdleIssue } from '../../domain/liveness';

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
    expect(decideStall(idle({ lastActivityAtMs: NOW - STALL + 1 }), NOW, STALL)).toEqual({ kind: 'not_yet' });
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
