/**
 * The database side of a retention pass: each statement deletes at most RETENTION_BATCH_SIZE rows, and a table is
 * done when a batch comes back short. The predicates keep everything of a live run, an active hold or an active
 * watchdog, and every row an exactly-once guarantee still needs (domain/retention.ts).
 */
import { Prisma, type Db } from '../db/prisma';
import {
  finishedRunStatuses,
  RETENTION_BATCH_SIZE,
  type RetentionCounts,
  type RetentionCutoffs,
} from '../domain/retention';
import { treeWalk } from '../tree/walk';

/** Repeats `batch` until it deletes fewer rows than a batch holds. */
async function drain(batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const removed = await batch();
    total += removed;
    if (removed < RETENTION_BATCH_SIZE) return total;
  }
}

const finished = () => Prisma.sql`(${Prisma.join(finishedRunStatuses())})`;

/** a hold that may still use its members and claims: active, or released too recently (its resume retries) */
const holdStillNeeded = (holdId: Prisma.Sql, cutoffs: RetentionCutoffs) =>
  Prisma.sql`EXISTS (SELECT 1 FROM "TreeHold" h WHERE h.id = ${holdId}
    AND (h.status = 'active' OR h."releasedAt" IS NULL OR h."releasedAt" >= ${cutoffs.releasedHold}))`;

/**
 * The one rule that keeps an owed resume (docs/operations.md, "Retention"): `run` was stopped by a hold, no resume has
 * claimed it, and a hold still covers its issue or an execution blocker of its issue is open, so a later release or
 * resolution still owes it its resume. The run and its stopping hold's member row naming it (the snapshot the resume
 * decision reads: dispatch/resume.ts) stay, however long ago that hold was released; every deletion below asks this.
 */
const owedResume = (run: Prisma.Sql) => Prisma.sql`(${run}."stoppedByHoldId" IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM "ResumeClaim" c WHERE c."interruptedRunId" = ${run}.id)
  AND (EXISTS (SELECT 1 FROM "ExecutionBlocker" b WHERE b."issueId" = ${run}."issueId" AND b.status = 'active')
    OR EXISTS (WITH RECURSIVE ${treeWalk({
      name: 'covering',
      direction: 'up',
      from: Prisma.sql`FROM "Issue" i WHERE i.id = ${run}."issueId"`,
    })} SELECT 1 FROM covering JOIN "TreeHold" h ON h."rootIssueId" = covering.id WHERE h.status = 'active')))`;

/** A member row naming the run its hold stopped, while that run is owed its resume. */
const snapshotOfOwedResume = (member: Prisma.Sql) => Prisma.sql`EXISTS (SELECT 1 FROM "Run" owed
  WHERE owed.id = ${member}."interruptedRunId" AND owed."stoppedByHoldId" = ${member}."holdId"
    AND ${owedResume(Prisma.sql`owed`)})`;

/** Finished runs past the cutoff, with their tokens, findings, evidence and jobs (one transaction per batch). */
async function removeRuns(
  db: Db,
  pass: RetentionPassScope,
  counts: RetentionCounts,
  afterCommit: RunsRemoved,
): Promise<number> {
  const { cutoffs } = pass;
  const deleted = await db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: string; hostId: string | null }[]>`
      SELECT r.id, r."hostId" FROM "Run" r
      WHERE r.status::text IN ${finished()}
        AND COALESCE(r."finishedAt", r."updatedAt") < ${cutoffs.finished}
        AND NOT EXISTS (SELECT 1 FROM "Job" j WHERE j."ownerRunId" = r.id AND j.status = 'running')
        AND NOT EXISTS (SELECT 1 FROM "TreeHoldMember" m
          WHERE m."interruptedRunId" = r.id AND ${holdStillNeeded(Prisma.sql`m."holdId"`, cutoffs)})
        AND NOT EXISTS (SELECT 1 FROM "ResumeClaim" c
          WHERE c."interruptedRunId" = r.id AND ${holdStillNeeded(Prisma.sql`c."holdId"`, cutoffs)})
        AND NOT EXISTS (SELECT 1 FROM "ExecutionBlocker" b WHERE b."runId" = r.id AND b.status = 'active')
        AND NOT ${owedResume(Prisma.sql`r`)}
        AND NOT EXISTS (SELECT 1 FROM "Watchdog" w WHERE w.id = r."reviewWatchdogId" AND w.status = 'active'
          AND r."reviewFingerprint" IN (w."pendingReviewFingerprint", w."lastReviewedFingerprint"))
      ORDER BY r."finishedAt" LIMIT ${RETENTION_BATCH_SIZE}
      FOR UPDATE SKIP LOCKED`;
    const ids = rows.map((row) => row.id);
    if (ids.length === 0) return rows;
    const of = Prisma.sql`ANY(${ids}::uuid[])`;
    counts.runTokens += await tx.$executeRaw`DELETE FROM "ApiToken" WHERE kind = 'run' AND "runId" = ${of}`;
    counts.findings += await tx.$executeRaw`DELETE FROM "Finding" WHERE "runId" = ${of}`;
    counts.gateEvidence += await tx.$executeRaw`DELETE FROM "GateEvidence" WHERE "runId" = ${of}`;
    counts.jobs += await tx.$executeRaw`DELETE FROM "Job" WHERE "ownerRunId" = ${of}`;
    counts.resumeClaims += await tx.$executeRaw`DELETE FROM "ResumeClaim" WHERE "interruptedRunId" = ${of}`;
    // this pass removes the folders on its own host; another host's worker removes its own at its next sweep
    await tx.$executeRaw`INSERT INTO "ExpiredRunFolder" ("runId", "hostId")
      SELECT id, "hostId" FROM "Run" WHERE id = ${of} AND "hostId" <> ${pass.hostId}`;
    await tx.$executeRaw`DELETE FROM "Run" WHERE id = ${of}`;
    return rows;
  });
  // batch by batch: a pass that fails later has still removed the folders of the runs it deleted
  // (a run that never got a host may have made its folder before a stop refused it one: here, as far as we know)
  const here = deleted.filter((run) => run.hostId === null || run.hostId === pass.hostId).map((run) => run.id);
  if (here.length > 0) await afterCommit(here);
  return deleted.length;
}

/** `DELETE FROM <table> WHERE id IN (<one batch of the rows matching where>)` */
const deleteBatch = (db: Db, table: string, where: Prisma.Sql) => () =>
  db.$executeRaw`DELETE FROM ${Prisma.raw(`"${table}"`)} WHERE id IN (
    SELECT id FROM ${Prisma.raw(`"${table}"`)} t WHERE ${where} LIMIT ${RETENTION_BATCH_SIZE})`;

const liveRunIds = () => Prisma.sql`(SELECT id FROM "Run" WHERE status::text NOT IN ${finished()})`;

/** the notification subjects (domain/notifications.ts) of a live run, an active hold or an active watchdog */
const liveSubjects = () => Prisma.sql`(SELECT 'run:' || id FROM ${liveRunIds()} live
  UNION ALL SELECT 'tree-hold:' || id FROM "TreeHold" WHERE status = 'active'
  UNION ALL SELECT 'task-watchdog:' || "issueId" FROM "Watchdog" WHERE status = 'active'
  UNION ALL SELECT 'task-watchdog:' || id FROM "Watchdog" WHERE status = 'active')`;

/** Called with each batch of deleted runs of this pass's host once its transaction committed. */
export type RunsRemoved = (runIds: string[]) => Promise<void>;

/** What one pass deletes, and the host it runs on (the run folders there are its own to remove). */
export interface RetentionPassScope {
  cutoffs: RetentionCutoffs;
  hostId: string;
}

/** Deletes the expired rows, and tells `afterCommit` which runs went. */
export async function removeExpiredRows(
  db: Db,
  pass: RetentionPassScope,
  afterCommit: RunsRemoved,
): Promise<Omit<RetentionCounts, 'runFolders'>> {
  const { cutoffs } = pass;
  const counts = { runTokens: 0, findings: 0, gateEvidence: 0, jobs: 0, resumeClaims: 0 } as RetentionCounts;
  counts.runs = await drain(() => removeRuns(db, pass, counts, afterCommit));
  // before the wakes: a claim's wake stays while the claim does
  const releasedLongAgo = Prisma.sql`NOT ${holdStillNeeded(Prisma.sql`t."holdId"`, cutoffs)}`;
  counts.holdMembers = await drain(
    deleteBatch(db, 'TreeHoldMember', Prisma.sql`${releasedLongAgo} AND NOT ${snapshotOfOwedResume(Prisma.sql`t`)}`),
  );
  counts.resumeClaims += await drain(
    () =>
      db.$executeRaw`DELETE FROM "ResumeClaim" WHERE "interruptedRunId" IN (
        SELECT "interruptedRunId" FROM "ResumeClaim" t WHERE ${releasedLongAgo} LIMIT ${RETENTION_BATCH_SIZE})`,
  );
  // a wake is removable once it became a run that is gone (or never did), and its key no retry can still use
  counts.wakeRequests = await drain(
    deleteBatch(
      db,
      'WakeRequest',
      Prisma.sql`t.status <> 'queued' AND t."createdAt" < ${cutoffs.finished}
        AND (t."runId" IS NULL OR NOT EXISTS (SELECT 1 FROM "Run" r WHERE r.id = t."runId"))
        AND (t."idempotencyKey" IS NULL OR t."createdAt" < ${cutoffs.dedupe})
        AND NOT (t."idempotencyKey" IS NOT NULL AND EXISTS (
          SELECT 1 FROM "Watchdog" w WHERE w.id = t."reviewWatchdogId" AND w.status = 'active'))
        AND NOT EXISTS (SELECT 1 FROM "ResumeClaim" c WHERE c."wakeRequestId" = t.id)`,
    ),
  );
  counts.sessionTokens = await drain(
    deleteBatch(
      db,
      'ApiToken',
      Prisma.sql`t.kind = 'board' AND t.purpose IS NOT NULL
      AND COALESCE(t."revokedAt", t."expiresAt") < ${cutoffs.finished}`,
    ),
  );
  counts.activityLog = await drain(
    deleteBatch(
      db,
      'ActivityLog',
      Prisma.sql`t."createdAt" < ${cutoffs.finished}
        AND (t."runId" IS NULL OR t."runId" NOT IN ${liveRunIds()})
        AND t."entityId" NOT IN (SELECT id::text FROM ${liveRunIds()} live
          UNION ALL SELECT id::text FROM "TreeHold" WHERE status = 'active'
          UNION ALL SELECT id::text FROM "Watchdog" WHERE status = 'active'
          UNION ALL SELECT "issueId"::text FROM "Watchdog" WHERE status = 'active')`,
    ),
  );
  counts.webhookDeliveries = await drain(
    deleteBatch(
      db,
      'WebhookDelivery',
      Prisma.sql`t.status <> 'pending' AND COALESCE(t."deliveredAt", t."deadAt", t."createdAt") < ${cutoffs.finished}
        AND NOT EXISTS (SELECT 1 FROM "Notification" n
          WHERE n.id = t."notificationId" AND n.subject IN ${liveSubjects()})`,
    ),
  );
  // a notification's key dedupes the same fact written again: kept as long as a retry could write it
  counts.notifications = await drain(
    deleteBatch(
      db,
      'Notification',
      Prisma.sql`t."createdAt" < ${cutoffs.dedupe}
        AND NOT EXISTS (SELECT 1 FROM "WebhookDelivery" d WHERE d."notificationId" = t.id)
        AND t.subject NOT IN ${liveSubjects()}`,
    ),
  );
  counts.idempotencyRecords = await drain(
    deleteBatch(db, 'IdempotencyRecord', Prisma.sql`t."createdAt" < ${cutoffs.dedupe}`),
  );
  return counts;
}
