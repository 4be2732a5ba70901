/** The rule that decides whether an interrupted run is owed exactly one resume. Pure. */
export interface InterruptedRunFacts {
  runId: string;
  runIsLatestOnIssue: boolean;
  runSettled: boolean;
  stopKind: string | null;
  /** the hold that stopped the run had the run in its member snapshot and was active then */
  namedBySnapshotOfStoppingHold: boolean;
  adapterEntered: boolean;
  issueAssigneeId: string | null;
  runAgentId: string;
  agentInvokable: boolean;
  coveringActiveHolds: number;
  activeExecutionBlockers: number;
  alreadyClaimed: boolean;
}

export type ResumeDecision =
  | { kind: 'owed' }
  | { kind: 'wait'; reason: 'stop_unwinding' | 'still_held' }
  | { kind: 'skip'; reason: 'execution_blocker' }
  | { kind: 'none'; reason: 'claimed' | 'not_latest_run' | 'not_a_hold_stop' | 'reassigned' | 'agent_not_invokable' };

export function decideResume(f: InterruptedRunFacts): ResumeDecision {
  if (f.alreadyClaimed) return { kind: 'none', reason: 'claimed' };
  if (f.stopKind !== 'operator_hold' || !f.namedBySnapshotOfStoppingHold) return { kind: 'none', reason: 'not_a_hold_stop' };
  if (!f.runIsLatestOnIssue) return { kind: 'none', reason: 'not_latest_run' };
  if (f.issueAssigneeId !== f.runAgentId) return { kind: 'none', reason: 'reassigned' };
  if (!f.agentInvokable) return { kind: 'none', reason: 'agent_not_invokable' };
  if (f.coveringActiveHolds > 0) return { kind: 'wait', reason: 'still_held' };
  if (!f.runSettled) return { kind: 'wait', reason: 'stop_unwinding' };
  if (f.adapterEntered || f.activeExecutionBlockers > 0) return { kind: 'skip', reason: 'execution_blocker' };
  return { kind: 'owed' };
}
