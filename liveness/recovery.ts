/**
 * Liveness recovery's pass (domain/liveness.ts decides): finds the agent-owned `in_progress` issues with no live
 * path, stalled longer than TREEWARDEN_LIVENESS_STALL_MS, and wakes each one's assignee once per stall with reason
 * `liveness_recovery`, under the usual admission gates (a hold defers the wake, the company's cap queues its run).
 * A `LivenessRecovery` row per (issue, stall) makes the recovery exactly once, however many passes (or workers) see
 * the stall at once. Run when the next idle issue falls due by the `liveness-watch` workflow (whose timer the changes
 * that can end a live path move: liveness/watch.ts), and by the `treewarden-liveness` safety schedule
 * (liveness/schedule.ts).
 */
import { logActivity } from '../db/activity-log';
import type { Tx } from '../db/prisma';
import { forEachConcurrently } from '../domain/concurrency';
import {
  LIVENESS_RECOVERY_WAKE_REASON,
  decideStall,
  nextPassInMs,
  pacedRecoveries,
  type IdleIssue,
  type LivenessPass,
  type StallDecision,
} from '../domain/liveness';
import { LIVE_RUN_STATUSES, TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import type { Deps } from '../runtime/deps';
import { createWake, dispatchWake } from '../dispatch/wakes';
import { heldIssueIds } from '../tree/queries';

/** Idle issues one pass reads at most, the longest idle first; the rest wait for the next pass. */
const PASS_CANDIDATES = 5_000;

/** Recoveries written at once: one short transaction and a dispatch each. */
const RECOVERY_CONCURRENCY = 8;

type IdleRow = {
  issueId: string;
  companyId: string;
  assigneeAgentId: string;
  lastActivityAtMs: number;
  nowMs: number;
  runId: string | null;
  runStatus: string | null;
  stopKind: string | null;
  wakeReason: string | null;
};

/**
 * The issues with no live path, the longest idle first, with the database's clock: in progress, assigned to an
 * invokable agent, not a review task, and with no live run, queued wake, pending interaction, active execution
 * blocker or pending monitor (a hold is ruled out after, by walking up). `truncated`: there may be more.
 */
async function idleIssues(tx: Tx): Promise<{ idle: (IdleIssue & { nowMs: number })[]; truncated: boolean }> {
  const rows = await tx.$queryRaw<IdleRow[]>`
    SELECT i.id AS "issueId", i."companyId", i."assigneeAgentId",
      round(date_part('epoch', greatest(i."updatedAt", r."finishedAt", r."createdAt", w.latest)) * 1000)::float8
        AS "lastActivityAtMs",
      round(date_part('epoch', now()) * 1000)::float8 AS "nowMs",
      r.id AS "runId", r.status::text AS "runStatus", r."stopKind", r."wakeReason"
    FROM "Issue" i
    JOIN "Agent" a ON a.id = i."assigneeAgentId" AND a.status = 'active'
    LEFT JOIN LATERAL (
      SELECT id, status, "stopKind", "wakeReason", "finishedAt", "createdAt" FROM "Run"
      WHERE "issueId" = i.id ORDER BY "createdAt" DESC LIMIT 1
    ) r ON true
    LEFT JOIN LATERAL (SELECT max("createdAt") AS latest FROM "WakeRequest" WHERE "issueId" = i.id) w ON true
    WHERE i.status = 'in_progress' AND i."originKind" <> ${TASK_WATCHDOG_ORIGIN}
      AND NOT EXISTS (
        SELECT 1 FROM "Run" WHERE "issueId" = i.id AND status::text = ANY(${LIVE_RUN_STATUSES}::text[]))
      AND NOT EXISTS (SELECT 1 FROM "WakeRequest" WHERE "issueId" = i.id AND status = 'queued')
      AND NOT EXISTS (SELECT 1 FROM "Interaction" WHERE "issueId" = i.id AND status = 'pending')
      AND NOT EXISTS (SELECT 1 FROM "ExecutionBlocker" WHERE "issueId" = i.id AND status = 'active')
      AND NOT EXISTS (SELECT 1 FROM "IssueMonitor" WHERE "issueId" = i.id AND status = 'pending')
    ORDER BY "lastActivityAtMs" LIMIT ${PASS_CANDIDATES}`;
  const held = await heldIssueIds(
    tx,
    rows.map((r) => r.issueId),
  );
  const idle = rows
    .filter((r) => !held.has(r.issueId))
    .map((r) => ({
      issueId: r.issueId,
      companyId: r.companyId,
      assigneeAgentId: r.assigneeAgentId,
      lastActivityAtMs: r.lastActivityAtMs,
      nowMs: r.nowMs,
      latestRun:
        r.runId === null
          ? null
          : { id: r.runId, status: r.runStatus!, stopKind: r.stopKind, wakeReason: r.wakeReason! },
    }));
  return { idle, truncated: rows.length === PASS_CANDIDATES };
}

/**
 * One pass: dispatch stranded wakes, decide every idle issue, recover the due ones paced per company, and say when
 * the next pass is owed.
 */
export async function recoverStalledIssues(deps: Deps): Promise<LivenessPass> {
  const { TREEWARDEN_LIVENESS_STALL_MS: stallMs, TREEWARDEN_LIVENESS_MAX_PER_COMPANY: perCompany } = deps.config;
  const redispatched = await redispatchStrandedWakes(deps);
  const { idle, truncated } = await idleIssues(deps.db);
  const decided = idle.map((issue) => ({ issue, decision: decideStall(issue, issue.nowMs, stallMs) }));
  const due = decided.flatMap(({ issue, decision }) =>
    decision.kind === 'recover' ? [{ ...issue, ...decision, companyId: issue.companyId }] : [],
  );
  const paced = pacedRecoveries(due, perCompany);
  let recovered = 0;
  await forEachConcurrently(paced, RECOVERY_CONCURRENCY, async (stall) => {
    if (await recover(deps, stall)) recovered++;
  });
  const stoodDown = decided.filter(({ decision }) => decision.kind === 'stand_down').length;
  const pacedOut = due.length - paced.length;
  const pass = {
    idle: idle.length,
    recovered,
    stoodDown,
    paced: pacedOut,
    redispatched,
    nextPassInMs: nextPassInMs(
      decided.map(({ decision }) => decision),
      { paced: pacedOut, truncated },
    ),
  };
  if (recovered > 0 || pass.paced > 0) deps.log.info(pass, 'liveness recovery pass');
  return pass;
}

type Due = IdleIssue & Extract<StallDecision, { kind: 'recover' }>;

/**
 * Records the recovery and its wake in one transaction (nothing if another pass recorded this stall, or if the
 * issue found a live path since the scan read it), then dispatches the wake.
 */
async function recover(deps: Deps, stall: Due): Promise<boolean> {
  const wake = await deps.db.$transaction(async (tx) => {
    const [recovery] = await tx.livenessRecovery.createManyAndReturn({
      data: [
        {
          companyId: stall.companyId,
          issueId: stall.issueId,
          stallKey: stall.stallKey,
          latestRunId: stall.latestRun?.id ?? null,
          stalledForMs: Math.round(stall.stalledForMs),
        },
      ],
      skipDuplicates: true,
    });
    if (!recovery || !(await stillIdle(tx, stall.issueId))) return null;
    const found = {
      recoveryId: recovery.id,
      stalledForMs: recovery.stalledForMs,
      latestRunId: recovery.latestRunId,
      latestRunStatus: stall.latestRun?.status ?? null,
    };
    const { wake: created } = await createWake(tx, {
      companyId: stall.companyId,
      agentId: stall.assigneeAgentId,
      issueId: stall.issueId,
      reason: LIVENESS_RECOVERY_WAKE_REASON,
      context: { livenessRecovery: found },
      idempotencyKey: `liveness-recovery:${recovery.id}`,
    });
    await tx.livenessRecovery.update({ where: { id: recovery.id }, data: { wakeRequestId: created.id } });
    await logActivity(tx, {
      companyId: stall.companyId,
      actor: { kind: 'system', companyId: stall.companyId },
      action: 'issue.liveness_recovered',
      entityType: 'issue',
      entityId: stall.issueId,
      details: { ...found, wakeRequestId: created.id },
    });
    return created;
  });
  if (!wake) return false;
  await dispatchWake(deps, wake.id, stall.companyId);
  return true;
}

/** Inside the recovery's transaction: no live run and no queued wake appeared since the scan. */
async function stillIdle(tx: Tx, issueId: string): Promise<boolean> {
  const [live] = await tx.$queryRaw<{ live: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM "Run" WHERE "issueId" = ${issueId}::uuid AND status::text = ANY(${LIVE_RUN_STATUSES}::text[])
    ) OR EXISTS (SELECT 1 FROM "WakeRequest" WHERE "issueId" = ${issueId}::uuid AND status = 'queued') AS live`;
  return !live.live;
}

/** Stranded wakes one pass dispatches at most, the oldest first. */
const STRANDED_WAKES_PER_PASS = 500;

/**
 * A wake queued for more than a minute outside any hold was stranded: whoever committed it died (or lost Temporal)
 * before dispatching it (an API process killed between the two, a recovery whose dispatch failed). Left queued, it
 * would count as its issue's live path forever, and nothing would start; each is dispatched again (the claim makes a
 * second dispatch a no-op). Wakes a hold defers stay queued until its release.
 */
async function redispatchStrandedWakes(deps: Deps): Promise<number> {
  const queued = await deps.db.$queryRaw<{ wakeId: string; companyId: string; issueId: string }[]>`
    SELECT id AS "wakeId", "companyId", "issueId" FROM "WakeRequest"
    WHERE status = 'queued' AND "createdAt" < now() - interval '1 minute'
    ORDER BY "createdAt" LIMIT ${STRANDED_WAKES_PER_PASS}`;
  const held = await heldIssueIds(
    deps.db,
    queued.map((w) => w.issueId),
  );
  const stranded = queued.filter((w) => !held.has(w.issueId));
  await forEachConcurrently(stranded, RECOVERY_CONCURRENCY, ({ wakeId, companyId }) =>
    dispatchWake(deps, wakeId, companyId).then(() => undefined),
  );
  return stranded.length;
}
