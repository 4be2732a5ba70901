/**
 * @module Postmortem arithmetic: which runs are productive, recovery time from a stopped verdict to
 * the next run in its subtree (p50 and max; unrecovered stops apart), and the end-reason vocabulary.
 */
import { agentUsage, computePostmortem, parseEndReason, percentile, type RunFacts } from '../../domain/postmortem';

const t = (s: number) => new Date(Date.UTC(2026, 11, 1, 0, 0, s));
const run = (
  id: string,
  issueId: string,
  status: string,
  start: number,
  end: number,
  extra: Partial<RunFacts> = {},
): RunFacts => ({
  id,
  issueId,
  status,
  failureState: null,
  startedAt: t(start),
  finishedAt: t(end),
  endReason: null,
  stopSurvivors: 0,
  usageTokens: null,
  usageCost: null,
  usageCurrency: null,
  acpSessionId: null,
  ...extra,
});

test('productive time counts succeeded and inspected runs only', () => {
  const p = computePostmortem({
    runs: [
      run('a', 'i', 'succeeded', 0, 10),
      run('b', 'i', 'failed', 10, 13, { failureState: 'inspected' }),
      run('c', 'i', 'failed', 13, 50, { failureState: 'uninspected' }),
      run('d', 'i', 'cancelled', 50, 90),
    ],
    stoppedVerdicts: [],
    silentFindings: [],
    orphanMonitors: 0,
    reapedProcesses: 0,
    jobStopSurvivors: 0,
    now: t(100),
  });
  expect(p.productiveTime.value).toBe(13);
  expect(p.window.from).toBe(t(0).toISOString());
});

test('recovery time: from each verdict to the first later run start in its subtree; p50 and max; unrecovered apart', () => {
  const p = computePostmortem({
    runs: [
      run('a', 'x', 'succeeded', 5, 6),
      run('b', 'y', 'succeeded', 30, 31),
      run('c', 'outside', 'succeeded', 12, 13),
    ],
    stoppedVerdicts: [
      { at: t(0), subtreeIssueIds: ['x', 'y'] },
      { at: t(10), subtreeIssueIds: ['x', 'y'] },
      { at: t(20), subtreeIssueIds: ['y'] },
      { at: t(40), subtreeIssueIds: ['x'] },
    ],
    silentFindings: [
      { runId: 'a', at: t(5), contradicted: true },
      { runId: 'b', at: t(30), contradicted: false },
    ],
    orphanMonitors: 2,
    reapedProcesses: 1,
    jobStopSurvivors: 1,
    now: t(100),
  });
  // 5 s, 20 s, 10 s recovered; the verdict at 40 s has no later run
  expect(p.watchdogRecoveryTime).toMatchObject({
    recovered: 3,
    stillStopped: 1,
    p50: { value: 10 },
    max: { value: 20 },
  });
  expect(p.falseStaleCount.value).toBe(1);
  expect(p.orphanMonitorCount.value).toBe(2);
  expect(p.detachedProcessCount.value).toBe(2);
});

test('nearest-rank percentile', () => {
  expect(percentile([], 50)).toBeNull();
  expect(percentile([7], 50)).toBe(7);
  expect(percentile([1, 2, 3, 4], 50)).toBe(2);
  expect(percentile([1, 2, 3, 4], 100)).toBe(4);
});

test('the end-reason vocabulary is closed', () => {
  expect(parseEndReason('{"reason":"context_overflow"}')).toBe('context_overflow');
  expect(parseEndReason('{"reason":"tired"}')).toBeNull();
  expect(parseEndReason('not json')).toBeNull();
  expect(parseEndReason(null)).toBeNull();
});

test("agents' usage: tokens add up over runs; a session's cumulative cost counts once, at its latest, per currency", () => {
  const usage = (id: string, tokens: number | null, cost: number | null, session: string | null, currency = 'USD') =>
    run(id, 'i', 'succeeded', 0, 1, {
      usageTokens: tokens,
      usageCost: cost,
      usageCurrency: cost === null ? null : currency,
      acpSessionId: session,
    });
  const p = agentUsage([
    usage('a', 100, 0.5, 's1'),
    usage('b', 50, 0.8, 's1'), // the continuation of s1: its total so far, not more spending
    usage('c', null, 2, 's2', 'credits'),
    usage('d', 7, null, null),
    run('e', 'i', 'succeeded', 0, 1),
  ]);
  expect(p.tokens.value).toBe(157);
  expect(p.cost.amounts).toEqual([
    { currency: 'credits', amount: 2 },
    { currency: 'USD', amount: 0.8 },
  ]);
  expect(p.reportingRuns).toBe(4);
  expect(agentUsage([run('e', 'i', 'succeeded', 0, 1)])).toMatchObject({ tokens: { value: null }, reportingRuns: 0 });
});
