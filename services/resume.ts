/** At-most-once re-dispatch of work a pause interrupted (seed 002, "What Changed"). */
import { decideResume, type ResumeDecision } from '../domain/resume';
import { isInvokable, isTerminalRunStatus } from '../domain/statuses';
import { logActivity } from './activity-log';
import type { Deps } from './deps';
import { activeHoldsCovering } from './tree';
import { createWake, dispatchWake, WakeDispatchError } from './wakes';

export interface ResumeReport {
  resumed: { issueId: string; runId: string }[];
  skipped: { issueId: string; reason: string }[];
  wakeFailures: { issueId: string; message: string }[];
}

export const emptyReport = (): ResumeReport => ({ resumed: [], skipped: [], wakeFailures: [] });

class AlreadyClaimed extends Error {}

async function decide(deps: Deps, interruptedRunId: string): Promise<{ decision: ResumeDecision; issueId: string; companyId: string; holdId: string | null; agentId: string }> {
  const db = deps.db;
  const run = await db.run.findUniqueOrThrow({ where: { id: interruptedRunId }, include: { agent: true, issue: true } });
  const [latest, claim, blockers, holds, member] = await Promise.all([
    db.run.findFirst({ where: { issueId: run.issueId, wakeRequestId: { not: null } }, orderBy: { createdAt: 'desc' }, select: { id: true } }),
    db.resumeClaim.findUnique({ where: { interruptedRunId } }),
    db.executionBlocker.count({ where: { issueId: run.issueId, status: 'active' } }),
    activeHoldsCovering(db, run.issueId),
    run.stoppedByHoldId
      ? db.treeHoldMember.findFirst({ where: { holdId: run.stoppedByHoldId, interruptedRunId } })
      : null,
  ]);
  const decision = decideResume({
    runId: run.id,
    runIsLatestOnIssue: latest?.id === run.id,
    runSettled: isTerminalRunStatus(run.status),
    stopKind: run.stopKind,
    // the pause writes the snapshot only while its hold is active
    namedBySnapshotOfStoppingHold: member !== null,
    adapterEntered: run.adapterEntered,
    issueAssigneeId: run.issue.assigneeAgentId,
    runAgentId: run.agentId,
    agentInvokable: isInvokable(run.agent.status),
    coveringActiveHolds: holds.length,
    activeExecutionBlockers: blockers,
    alreadyClaimed: claim !== null,
  });
  return { decision, issueId: run.issueId, companyId: run.companyId, holdId: run.stoppedByHoldId, agentId: run.agentId };
}

/**
 * Examines one interrupted run and, when owed, claims and dispatches its single resume.
 * The claim row (keyed on the run) and the wake are written in one transaction; a failed
 * dispatch deletes the claim again so a later release or settlement can retry.
 */
export async function resumeIfOwed(deps: Deps, interruptedRunId: string, report: ResumeReport, releasingHoldId?: string): Promise<void> {
  const { decision, issueId, companyId, holdId, agentId } = await decide(deps, interruptedRunId);
  switch (decision.kind) {
    case 'none':
    case 'wait':
      return;
    case 'skip':
      await deps.db.$transaction((tx) =>
        logActivity(tx, {
          companyId,
          actor: { kind: 'system', companyId },
          action: 'issue.tree_resume_wake_skipped',
          entityType: 'issue',
          entityId: issueId,
          details: { interruptedRunId, holdId: releasingHoldId ?? holdId, reason: decision.reason },
        }),
      );
      report.skipped.push({ issueId, reason: decision.reason });
      return;
    case 'owed':
      break;
  }
  let wakeId: string;
  try {
    wakeId = await deps.db.$transaction(async (tx) => {
      const { wake } = await createWake(tx, {
        companyId,
        agentId,
        issueId,
        reason: 'issue_tree_resumed',
        context: { holdId: releasingHoldId ?? holdId, interruptedRunId },
      });
      const { count } = await tx.resumeClaim.createMany({
        data: [{ interruptedRunId, holdId: releasingHoldId ?? holdId ?? '', wakeRequestId: wake.id }],
        skipDuplicates: true,
      });
      if (count === 0) throw new AlreadyClaimed();
      await logActivity(tx, {
        companyId,
        actor: { kind: 'system', companyId },
        action: 'issue.tree_resume_claimed',
        entityType: 'issue',
        entityId: issueId,
        details: { interruptedRunId, wakeRequestId: wake.id, holdId: releasingHoldId ?? holdId },
      });
      return wake.id;
    });
  } catch (error) {
    if (error instanceof AlreadyClaimed) return;
    throw error;
  }
  try {
    const outcome = await dispatchWake(deps, wakeId);
    if (outcome.kind === 'dispatched') report.resumed.push({ issueId, runId: outcome.runId });
    else throw new WakeDispatchError(wakeId, outcome.kind === 'skipped' ? outcome.reason : outcome.kind);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await deps.db.$transaction([
      deps.db.resumeClaim.deleteMany({ where: { interruptedRunId, wakeRequestId: wakeId } }),
      deps.db.wakeRequest.updateMany({ where: { id: wakeId, status: 'queued' }, data: { status: 'cancelled', skipReason: message } }),
    ]);
    report.wakeFailures.push({ issueId, message });
  }
}

/** Called when a run settles: a release that happened while its stop was unwinding is honoured now. */
export async function settleInterruptedRun(deps: Deps, runId: string): Promise<void> {
  const run = await deps.db.run.findUnique({ where: { id: runId }, select: { stopKind: true } });
  if (run?.stopKind !== 'operator_hold') return;
  await resumeIfOwed(deps, runId, emptyReport());
}
