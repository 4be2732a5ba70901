/**
 * @module Unit: whether a hold's stops are verified (domain/hold-stops.ts): each interrupted run's
 * stop from its row, and the hold's stop state as the worst of them, with the survivors listed.
 */
import { holdStopsOf, runStopOf, type InterruptedRun, type RunStop } from '../../domain/hold-stops';

const STOPPING: InterruptedRun = { id: 'run-1', status: 'running', stopRequestedAt: new Date(0), stopResult: null };
const survivor = { pid: 41, pgid: 40, command: 'sleep 120' };
const partialResult = {
  verdict: 'stop-partial',
  attempts: [
    { signal: 'SIGTERM', verdict: 'stop-partial', survivors: [survivor, { pid: 42, pgid: 40, command: 'sh' }] },
    { signal: 'SIGKILL', verdict: 'stop-partial', survivors: [survivor], writersAlive: 1 },
  ],
};

const RUNS: [string, Partial<InterruptedRun>, Partial<RunStop>][] = [
  ['still unwinding', {}, { state: 'pending', verdict: null }],
  [
    'verified clean',
    { status: 'cancelled', stopResult: { verdict: 'terminal-clean', attempts: [] } },
    { state: 'verified', verdict: 'terminal-clean' },
  ],
  [
    'survivors after SIGKILL: the last attempt lists them',
    { status: 'cancelled', stopResult: partialResult },
    { state: 'partial', verdict: 'stop-partial', survivors: [survivor], writersAlive: 1 },
  ],
  [
    'awaits its host',
    { status: 'cancelled', stopResult: { verdict: 'stop-pending', host: 'h' } },
    { state: 'pending', verdict: 'stop-pending' },
  ],
  [
    'its host declared lost',
    { status: 'cancelled', stopResult: { verdict: 'host-lost', host: 'h' } },
    { state: 'host_lost', verdict: 'host-lost' },
  ],
  ['cancelled while queued: no process ever started', { status: 'cancelled' }, { state: 'verified', verdict: null }],
  ['ended on its own before the stop', { status: 'succeeded', stopRequestedAt: null }, { state: 'ended' }],
  [
    'an unknown verdict on a live run is not verified',
    { stopResult: { verdict: 'surprise' } },
    { state: 'pending', verdict: 'surprise' },
  ],
];

test.each(RUNS)('a run %s', (_name, facts, expected) => {
  expect(runStopOf({ ...STOPPING, ...facts })).toEqual({
    runId: 'run-1',
    verdict: null,
    survivors: [],
    writersAlive: 0,
    ...expected,
  });
});

const stop = (state: RunStop['state'], runId = `run-${state}`): RunStop => ({
  runId,
  state,
  verdict: null,
  survivors: state === 'partial' ? [survivor] : [],
  writersAlive: 0,
});

test.each([
  ['no runs stopped', [null], 'verified'],
  ['every stop verified or not needed', [stop('verified'), stop('ended'), null], 'verified'],
  ['one still pending', [stop('verified'), stop('pending')], 'pending'],
  ['a lost host, nothing else open', [stop('verified'), stop('host_lost')], 'host_lost'],
  ['partial before pending and lost hosts', [stop('pending'), stop('partial'), stop('host_lost')], 'partial'],
] as const)('a hold with %s', (_name, stops, expected) => {
  const members = stops.map((s, i) => ({ issueId: `issue-${i}`, stop: s }));
  const { stopState, survivors } = holdStopsOf(members);
  expect(stopState).toBe(expected);
  const partial = members.filter((m) => m.stop?.state === 'partial');
  expect(survivors).toEqual(
    partial.map((m) => ({ runId: m.stop!.runId, issueId: m.issueId, processes: [survivor], writersAlive: 0 })),
  );
});
