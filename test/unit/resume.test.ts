/**
 * @module Unit: the at-most-once resume rule (domain/resume.ts). One row per decision branch, each
 * starting from facts that make a resume owed and changing only what the branch is about.
 */
import { decideResume, type InterruptedRunFacts, type ResumeDecision } from '../../domain/resume';

/** A run stopped by an active hold that snapshotted it, settled, untouched since: a resume is owed. */
const OWED: InterruptedRunFacts = {
  runId: 'run-1',
  runIsLatestOnIssue: true,
  runSettled: true,
  stopKind: 'operator_hold',
  namedBySnapshotOfStoppingHold: true,
  adapterEntered: false,
  checkpointPreserved: false,
  blockerResolved: false,
  issueAssigneeId: 'agent-1',
  runAgentId: 'agent-1',
  agentInvokable: true,
  coveringActiveHolds: 0,
  activeExecutionBlockers: 0,
  alreadyClaimed: false,
};

type Row = [string, Partial<InterruptedRunFacts>, ResumeDecision];

const BRANCHES: Row[] = [
  ['a settled hold stop of the latest run, nothing in the way', {}, { kind: 'owed' }],
  ['the resume was already claimed', { alreadyClaimed: true }, { kind: 'none', reason: 'claimed' }],
  [
    'the run was stopped by an operator stop, not a hold',
    { stopKind: 'operator_stop' },
    { kind: 'none', reason: 'not_a_hold_stop' },
  ],
  ['the run was never stopped', { stopKind: null }, { kind: 'none', reason: 'not_a_hold_stop' }],
  [
    "the stopping hold's snapshot does not name the run",
    { namedBySnapshotOfStoppingHold: false },
    { kind: 'none', reason: 'not_a_hold_stop' },
  ],
  ['a later run exists on the issue', { runIsLatestOnIssue: false }, { kind: 'none', reason: 'not_latest_run' }],
  ['the issue was reassigned to another agent', { issueAssigneeId: 'agent-2' }, { kind: 'none', reason: 'reassigned' }],
  ['the issue was unassigned', { issueAssigneeId: null }, { kind: 'none', reason: 'reassigned' }],
  ['the agent is no longer invokable', { agentInvokable: false }, { kind: 'none', reason: 'agent_not_invokable' }],
  ['another active hold still covers the issue', { coveringActiveHolds: 1 }, { kind: 'wait', reason: 'still_held' }],
  ['the stopped run has not settled yet', { runSettled: false }, { kind: 'wait', reason: 'stop_unwinding' }],
  [
    'the adapter was entered (mid-turn: the outcome is unknown)',
    { adapterEntered: true },
    { kind: 'skip', reason: 'execution_blocker' },
  ],
  [
    'an execution blocker is active on the issue',
    { activeExecutionBlockers: 2 },
    { kind: 'skip', reason: 'execution_blocker' },
  ],
  // issue 14: entered, with no preserved checkpoint and an active blocker → skip; preserved → owed; resolved → owed
  [
    'entered, no preserved checkpoint, its blocker active',
    { adapterEntered: true, activeExecutionBlockers: 1 },
    { kind: 'skip', reason: 'execution_blocker' },
  ],
  [
    'entered and preserved by a verified checkpoint',
    { adapterEntered: true, checkpointPreserved: true },
    { kind: 'owed' },
  ],
  ['entered, its blocker resolved by a person', { adapterEntered: true, blockerResolved: true }, { kind: 'owed' }],
];

test.each(BRANCHES)('%s → %j', (_case, facts, expected) => {
  expect(decideResume({ ...OWED, ...facts })).toEqual(expected);
});

test('the table reaches every decision and reason of ResumeDecision', () => {
  const reached = new Set(BRANCHES.map(([, , d]) => ('reason' in d ? `${d.kind}:${d.reason}` : d.kind)));
  expect([...reached].sort()).toEqual(
    [
      'owed',
      'none:claimed',
      'none:not_a_hold_stop',
      'none:not_latest_run',
      'none:reassigned',
      'none:agent_not_invokable',
      'wait:still_held',
      'wait:stop_unwinding',
      'skip:execution_blocker',
    ].sort(),
  );
});

// Precedence: where several facts hold at once, the order of the rules decides.
test.each<Row>([
  [
    'a claimed resume is final whatever else holds',
    { alreadyClaimed: true, stopKind: null, runSettled: false, coveringActiveHolds: 3 },
    { kind: 'none', reason: 'claimed' },
  ],
  [
    'a reassigned issue is not waited for, even while held and unwinding',
    { issueAssigneeId: 'agent-2', coveringActiveHolds: 1, runSettled: false },
    { kind: 'none', reason: 'reassigned' },
  ],
  [
    'a still-held issue waits for its holds before the unwinding stop is considered',
    { coveringActiveHolds: 1, runSettled: false },
    { kind: 'wait', reason: 'still_held' },
  ],
  [
    'a preserved checkpoint does not override another active blocker on the issue',
    { adapterEntered: true, checkpointPreserved: true, activeExecutionBlockers: 1 },
    { kind: 'skip', reason: 'execution_blocker' },
  ],
  [
    'a resolved blocker does not override another still-active one',
    { adapterEntered: true, blockerResolved: true, activeExecutionBlockers: 1 },
    { kind: 'skip', reason: 'execution_blocker' },
  ],
  [
    'a resolved blocker still waits for a covering hold (the resume comes with the last release)',
    { adapterEntered: true, blockerResolved: true, coveringActiveHolds: 1 },
    { kind: 'wait', reason: 'still_held' },
  ],
  [
    'an unwinding stop is waited for before a blocker can skip it (the adapter flag is final only once settled)',
    { runSettled: false, adapterEntered: true },
    { kind: 'wait', reason: 'stop_unwinding' },
  ],
])('precedence: %s', (_case, facts, expected) => {
  expect(decideResume({ ...OWED, ...facts })).toEqual(expected);
});
