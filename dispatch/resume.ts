/** At-most-once re-dispatch of work a pause interrupted (seed 002, "What Changed"). */
import { Prisma } from '../db/prisma';
import { emptyReport, type ResumeReport } from '../domain/hold-contract';
import { decideResume, type ResumeDecision } from '../domain/resume';
import { isInvokable, isTerminalRunStatus, type AgentStatus, type RunStatus } from '../domain/statuses';
import { logActivity } from '../db/activity-log';
import { FAN_OUT_CONCURRENCY, forEachConcurrently } from '../domain/concurrency';
import type { Deps } from '../runtime/deps';
import { treeWalk } from '../tree/walk';
import { claimWakeForRun, createWake, startClaimedRun, WakeDispatchError, type WakeClaim } from './wakes';

class AlreadyClaimed extends Error {}

interface Decided {
  decision: ResumeDecision;
  runId: string;
  issueId: string;
  companyId: string;
  holdId: string | null;
  agentId: string;
  /** what the resumed run is told about the interrupted one */
  continuation: Continuation;
}

/** In the resumed run's directive beside `holdId` and `interruptedRunId`. */
interface Continuation {
  /** the checkpoint the interrupted run preserved; null when a person reconciled it instead */
  checkpoint: unknown;
  reconciliation?: { blockerId: string; resolution: string | null };
}

interface ResumeFactsRow {
  runId: string;
  issueId: string;
  companyId: string;
  agentId: string;
  status: RunStatus;
  stopKind: string | null;
  stoppedByHoldId: string | null;
  adapterEntered: boolean;
  checkpoint: unknown;
  resolvedBlockerId: string | null;
  resolution: string | null;
  agentStatus: AgentStatus;
  issueAssigneeId: string | null;
  isLatest: boolean;
  claimed: boolean;
  blockers: number;
  holds: number;
  named: boolean;
}

/**
 * The facts of `decideResume` for many interrupted runs in one statement (was nine per run; a
 * 1,000-member release spent most of its time here, bench scenario 5). Holds covering a run's
 * issue are found by one upward walk from every run's issue at once.
 */
async function decideAll(deps: Deps, runIds: string[]): Promise<Decided[]> {
  if (runIds.length === 0) return [];
  const rows = await deps.db.$queryRaw<ResumeFactsRow[]>`
    WITH RECURSIVE target AS (SELECT * FROM "Run" WHERE id = ANY(${runIds}::uuid[])),
    ${treeWalk({
      name: 'up',
      direction: 'up',
      from: Prisma.sql`FROM target JOIN "Issue" i ON i.id = target."issueId"`,
      carry: { runId: Prisma.sql`target.id` },
    })}
    SELECT t.id::text AS "runId", t."issueId"::text AS "issueId", t."companyId"::text AS "companyId",
      t."agentId"::text AS "agentId",
      t.status::text AS status, t."stopKind", t."stoppedByHoldId"::text AS "stoppedByHoldId", t."adapterEntered",
      CASE WHEN t."stopResult"->>'outcome' = 'preserved' THEN t."stopResult"->'checkpoint' END AS checkpoint,
      rb.id::text AS "resolvedBlockerId", rb.resolution,
      a.status::text AS "agentStatus", i."assigneeAgentId"::text AS "issueAssigneeId",
      coalesce((SELECT l.id FROM "Run" l WHERE l."issueId" = t."issueId" AND l."wakeRequestId" IS NOT NULL
                ORDER BY l."createdAt" DESC LIMIT 1) = t.id, false) AS "isLatest",
      EXISTS (SELECT 1 FROM "ResumeClaim" c WHERE c."interruptedRunId" = t.id) AS claimed,
      (SELECT count(*)::int FROM "ExecutionBlocker" b
        WHERE b."issueId" = t."issueId" AND b.status = 'active') AS blockers,
      (SELECT count(*)::int FROM up JOIN "TreeHold" h ON h."rootIssueId" = up.id
        WHERE up."runId" = t.id AND h.status = 'active') AS holds,
      -- the pause writes the snapshot only while its hold is active
      EXISTS (SELECT 1 FROM "TreeHoldMember" m
        WHERE m."holdId" = t."stoppedByHoldId" AND m."interruptedRunId" = t.id) AS named
    FROM target t JOIN "Agent" a ON a.id = t."agentId" JOIN "Issue" i ON i.id = t."issueId"
    LEFT JOIN LATERAL (SELECT b.id, b.resolution FROM "ExecutionBlocker" b
      WHERE b."runId" = t.id AND b.status = 'resolved' ORDER BY b."resolvedAt" DESC LIMIT 1) rb ON true`;
  return rows.map((r) => ({
    decision: decideResume({
      runId: r.runId,
      runIsLatestOnIssue: r.isLatest,
      runSettled: isTerminalRunStatus(r.status),
      stopKind: r.stopKind,
      namedBySnapshotOfStoppingHold: r.named,
      adapterEntered: r.adapterEntered,
      checkpointPreserved: r.checkpoint !== null,
      blockerResolved: r.resolvedBlockerId !== null,
      issueAssigneeId: r.issueAssigneeId,
      runAgentId: r.agentId,
      agentInvokable: isInvokable(r.agentStatus),
      coveringActiveHolds: r.holds,
      activeExecutionBlockers: r.blockers,
      alreadyClaimed: r.claimed,
    }),
    runId: r.runId,
    issueId: r.issueId,
    companyId: r.companyId,
    holdId: r.stoppedByHoldId,
    agentId: r.agentId,
    continuation: {
      checkpoint: r.checkpoint,
      ...(r.resolvedBlockerId ? { reconciliation: { blockerId: r.resolvedBlockerId, resolution: r.resolution } } : {}),
    },
  }));
}

/** Decided in chunks, so a gate (a new blocker, a new hold) is read at most one chunk before its claim. */
const DECISION_CHUNK = 60;

/** `resumeIfOwed` for many interrupted runs: decided a chunk at a time, claimed side by side. */
export async function resumeEachIfOwed(
  deps: Deps,
  runIds: string[],
  report: ResumeReport,
  releasingHoldId?: string,
): Promise<void> {
  for (let i = 0; i < runIds.length; i += DECISION_CHUNK) {
    const decided = await decideAll(deps, runIds.slice(i, i + DECISION_CHUNK));
    // each resume is its own claim (a CAS on the interrupted run), so members can go in parallel
    await forEachConcurrently(decided, FAN_OUT_CONCURRENCY, (d) => actOn(deps, d, report, releasingHoldId));
  }
}

/**
 * Examines one interrupted run and, when owed, claims and dispatches its single resume.
 * The claim row (keyed on the run), the wake and the resumed run are written in one transaction;
 * a workflow start that fails deletes the claim again so a later release or settlement can retry.
 */
export async function resumeIfOwed(
  deps: Deps,
  interruptedRunId: string,
  report: ResumeReport,
  releasingHoldId?: string,
): Promise<void> {
  const [decided] = await decideAll(deps, [interruptedRunId]);
  if (!decided) throw new Error(`interrupted run ${interruptedRunId} not found`);
  await actOn(deps, decided, report, releasingHoldId);
}

async function actOn(
  deps: Deps,
  { decision, runId: interruptedRunId, issueId, companyId, holdId, agentId, continuation }: Decided,
  report: ResumeReport,
  releasingHoldId?: string,
): Promise<void> {
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
  const holdOfClaim = releasingHoldId ?? holdId;
  let claimed: { wakeId: string; claim: WakeClaim };
  try {
    // the claim, its wake and the resumed run commit together: one transaction per member (was two, bench scenario 5)
    claimed = await deps.db.$transaction(async (tx) => {
      const { wake } = await createWake(tx, {
        companyId,
        agentId,
        issueId,
        reason: 'issue_tree_resumed',
        directive: { holdId: holdOfClaim, interruptedRunId, ...continuation },
      });
      const { count } = await tx.resumeClaim.createMany({
        data: [{ interruptedRunId, holdId: holdOfClaim ?? '', wakeRequestId: wake.id }],
        skipDuplicates: true,
      });
      if (count === 0) throw new AlreadyClaimed();
      await logActivity(tx, {
        companyId,
        actor: { kind: 'system', companyId },
        action: 'issue.tree_resume_claimed',
        entityType: 'issue',
        entityId: issueId,
        details: { interruptedRunId, wakeRequestId: wake.id, holdId: holdOfClaim },
      });
      const claim = await claimWakeForRun(tx, wake.id, companyId);
      // not dispatchable now (a new hold, an agent paused meanwhile): none of this resume stays,
      // a later release retries
      if (claim.kind !== 'dispatched')
        throw new WakeDispatchError(wake.id, claim.kind === 'skipped' ? claim.reason : claim.kind);
      return { wakeId: wake.id, claim };
    });
  } catch (error) {
    if (error instanceof AlreadyClaimed) return;
    if (!(error instanceof WakeDispatchError)) throw error;
    report.wakeFailures.push({ issueId, message: error.message });
    return;
  }
  try {
    const outcome = await startClaimedRun(deps, claimed.wakeId, claimed.claim);
    if (outcome.kind === 'dispatched') report.resumed.push({ issueId, runId: outcome.runId });
  } catch (error) {
    if (!(error instanceof WakeDispatchError)) throw error;
    // Temporal refused the workflow after the commit: the claim goes, so a later release or settlement can retry
    await deps.db.$transaction([
      deps.db.resumeClaim.deleteMany({ where: { interruptedRunId, wakeRequestId: claimed.wakeId } }),
      deps.db.wakeRequest.updateMany({
        where: { id: claimed.wakeId, status: 'queued' },
        data: { status: 'cancelled', skipReason: error.message },
      }),
    ]);
    report.wakeFailures.push({ issueId, message: error.message });
  }
}

/** Called when a run settles: a release that happened while its stop was unwinding is honoured now. */
export async function settleInterruptedRun(deps: Deps, runId: string): Promise<void> {
  const run = await deps.db.run.findUnique({ where: { id: runId }, select: { stopKind: true } });
  if (run?.stopKind !== 'operator_hold') return;
  await resumeIfOwed(deps, runId, emptyReport());
}
