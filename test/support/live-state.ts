/**
 * What a retention pass left, table by table, split into what belongs to the live state it must keep (a live run, an
 * active hold, an active watchdog) and what does not: after a pass at zero days, `strays` must be empty everywhere.
 */
import type { Db } from '../../db/prisma';

export interface LiveState {
  /** the runs retention must keep: live ones, the run an active hold interrupted, an active watchdog's review run */
  runIds: string[];
  holdIds: string[];
  /** the active watchdogs' rows */
  watchdogIds: string[];
  /** the issues active watchdogs watch (their log entries and notifications name the issue) */
  watchedIssueIds: string[];
}

export interface Census {
  /** rows left per table */
  counts: Record<string, number>;
  /** per table, the ids of rows left that belong to no live state */
  strays: Record<string, string[]>;
}

const liveSubjects = (live: LiveState) => [
  ...live.runIds.map((id) => `run:${id}`),
  ...live.holdIds.map((id) => `tree-hold:${id}`),
  ...[...live.watchdogIds, ...live.watchedIssueIds].map((id) => `task-watchdog:${id}`),
];

export async function censusOfRetainedRows(db: Db, live: LiveState): Promise<Census> {
  const runs = new Set(live.runIds);
  const entities = new Set([...live.runIds, ...live.holdIds, ...live.watchdogIds, ...live.watchedIssueIds]);
  const subjects = new Set(liveSubjects(live));
  const ofRun = (runId: string | null) => runId !== null && runs.has(runId);
  const tables: Record<string, { id: string; live: boolean }[]> = {
    Run: (await db.run.findMany()).map((r) => ({ id: r.id, live: runs.has(r.id) })),
    'ApiToken (run)': (await db.apiToken.findMany({ where: { kind: 'run' } })).map((t) => ({
      id: t.id,
      live: ofRun(t.runId),
    })),
    Finding: (await db.finding.findMany()).map((f) => ({ id: f.id, live: ofRun(f.runId) })),
    GateEvidence: (await db.gateEvidence.findMany()).map((g) => ({ id: g.id, live: ofRun(g.runId) })),
    Job: (await db.job.findMany()).map((j) => ({ id: j.id, live: ofRun(j.ownerRunId) })),
    WakeRequest: (await db.wakeRequest.findMany()).map((w) => ({
      id: w.id,
      live: ofRun(w.runId) || (w.reviewWatchdogId !== null && live.watchdogIds.includes(w.reviewWatchdogId)),
    })),
    ActivityLog: (await db.activityLog.findMany()).map((a) => ({
      id: a.id,
      live: ofRun(a.runId) || entities.has(a.entityId),
    })),
    Notification: (await db.notification.findMany()).map((n) => ({ id: n.id, live: subjects.has(n.subject) })),
    WebhookDelivery: (await db.webhookDelivery.findMany({ include: { notification: true } })).map((d) => ({
      id: d.id,
      live: subjects.has(d.notification.subject),
    })),
    IdempotencyRecord: (await db.idempotencyRecord.findMany()).map((r) => ({ id: r.id, live: false })),
    TreeHoldMember: (await db.treeHoldMember.findMany()).map((m) => ({
      id: m.id,
      live: live.holdIds.includes(m.holdId),
    })),
    ResumeClaim: (await db.resumeClaim.findMany()).map((c) => ({
      id: c.interruptedRunId,
      live: live.holdIds.includes(c.holdId),
    })),
    ExpiredRunFolder: (await db.expiredRunFolder.findMany()).map((f) => ({ id: f.runId, live: false })),
  };
  const census: Census = { counts: {}, strays: {} };
  for (const [table, rows] of Object.entries(tables)) {
    census.counts[table] = rows.length;
    census.strays[table] = rows.filter((row) => !row.live).map((row) => row.id);
  }
  return census;
}
