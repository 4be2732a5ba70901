/**
 * Retention (retention/): what a pass may delete, by age. Everything finished more than TREEWARDEN_RETENTION_DAYS ago
 * goes, except what an exactly-once guarantee still needs: a row that dedupes a retry lives at least as long as a
 * retry could arrive, and a released hold's resume claims as long as its workflow may still retry owed resumes.
 */

const DAY_MS = 24 * 60 * 60_000;

/**
 * An Idempotency-Key, a wake's idempotency key or a notification's dedupe key is kept at least this long, whatever
 * the retention: the window in which clients retry a request (24 hours, as payment APIs keep their keys).
 */
export const DEDUPE_MIN_AGE_MS = DAY_MS;

/** rows per statement: a pass holds no lock long and never fills the transaction log at once */
export const RETENTION_BATCH_SIZE = 500;

/** 1 s doubling to 5 minutes: the tree-hold workflow's wait before its retry of owed resumes number `retriesSoFar`. */
export const resumeRetryDelayMs = (retriesSoFar: number): number => Math.min(1_000 * 2 ** retriesSoFar, 300_000);

/** How long after a release its workflow may still retry owed resumes, and so still use the hold's claims. */
export function resumeRetryHorizonMs(maximumRetries: number): number {
  let total = 0;
  for (let retry = 0; retry < maximumRetries; retry++) total += resumeRetryDelayMs(retry);
  return total;
}

export interface RetentionCutoffs {
  /** a run, delivery, log entry or expired session finished (or written) before this may go */
  finished: Date;
  /** a row whose key dedupes retries may go when written before this */
  dedupe: Date;
  /** the members and resume claims of a hold released before this may go */
  releasedHold: Date;
}

export function retentionCutoffs(now: Date, retentionDays: number, maximumResumeRetries: number): RetentionCutoffs {
  const finished = now.getTime() - retentionDays * DAY_MS;
  const older = (minimumAgeMs: number) => new Date(Math.min(finished, now.getTime() - minimumAgeMs));
  return {
    finished: new Date(finished),
    dedupe: older(DEDUPE_MIN_AGE_MS),
    releasedHold: older(Math.max(DEDUPE_MIN_AGE_MS, resumeRetryHorizonMs(maximumResumeRetries))),
  };
}

export const RETENTION_TABLES = [
  'runs',
  'runTokens',
  'sessionTokens',
  'findings',
  'gateEvidence',
  'jobs',
  'wakeRequests',
  'activityLog',
  'webhookDeliveries',
  'notifications',
  'idempotencyRecords',
  'holdMembers',
  'resumeClaims',
  'runFolders',
] as const;
export type RetentionTable = (typeof RETENTION_TABLES)[number];
export type RetentionCounts = Record<RetentionTable, number>;

export const noRemovals = (): RetentionCounts =>
  Object.fromEntries(RETENTION_TABLES.map((table) => [table, 0])) as RetentionCounts;

export function addRemovals(into: RetentionCounts, removed: Partial<RetentionCounts>): RetentionCounts {
  for (const table of RETENTION_TABLES) into[table] += removed[table] ?? 0;
  return into;
}

const FINISHED_RUN_STATUSES = ['succeeded', 'failed', 'cancelled', 'timed_out'];
export const finishedRunStatuses = (): string[] => [...FINISHED_RUN_STATUSES];
