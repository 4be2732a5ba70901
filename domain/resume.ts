/**
 * The rule that decides whether an interrupted run is owed exactly one resume. Pure.
 *
 * A run stopped before its adapter is owed one. One stopped inside it (mid-turn) is owed one only
 * when its outcome is known: the agent preserved a verified checkpoint, or a person reconciled it
 * (resolved its execution blocker). Anything else is never replayed blindly: it is skipped, with
 * its blocker visible, and the obligation stays unclaimed until one of the two happens.
 */
export interface InterruptedRunFacts {
  runId: string;
  runIsLatestOnIssue: boolean;
  runSettled: boolean;
  stopKind: string | null;
  /** the hold that stopped the run had the run in its member snapshot and was active then */
  namedBySnapshotOfStoppingHold: boolean;
  adapterEntered: boolean;
  /** the verified stop was clean and the agent wrote a resumable checkpoint after it was requested */
  checkpointPreserved: boolean;
  /** the execution blocker of this run was resolved by a person */
  blockerResolved: boolean;
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
  if (f.stopKind !== 'operator_hold' || !f.namedBySnapshotOfStoppingHold)
    return { kind: 'none', reason: 'not_a_hold_stop' };
  if (!f.runIsLatestOnIssue) return { kind: 'none', reason: 'not_latest_run' };
  if (f.issueAssigneeId !== f.runAgentId) return { kind: 'none', reason: 'reassigned' };
  if (!f.agentInvokable) return { kind: 'none', reason: 'agent_not_invokable' };
  if (f.coveringActiveHolds > 0) return { kind: 'wait', reason: 'still_held' };
  if (!f.runSettled) return { kind: 'wait', reason: 'stop_unwinding' };
  if (f.activeExecutionBlockers > 0) return { kind: 'skip', reason: 'execution_blocker' };
  if (f.adapterEntered && !f.checkpointPreserved && !f.blockerResolved)
    return { kind: 'skip', reason: 'execution_blocker' };
  return { kind: 'owed' };
}
