/**
 * The scenarios' worlds: bulk seeding through the bench's own, uncounted pool (the scenarios measure treewarden, not
 * setup), and changes made the way the API makes them, at a steady pace.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { stopFingerprint } from '../domain/watchdog';
import { recordSubtreeChange } from '../changes/record';
import type { Harness } from '../testing/harness';
import { inParallel } from './support';

// seeding

export interface SeedIssue {
  id: string;
  parentId: string | null;
  status: string;
  assigneeAgentId?: string | null;
  /** created a day ago by default, so the first-run grace never applies to seeded issues */
  createdAt?: Date;
}

const DAY_AGO = () => new Date(Date.now() - 86_400_000);

export async function insertIssues(pool: pg.Pool, companyId: string, issues: SeedIssue[]): Promise<void> {
  for (let i = 0; i < issues.length; i += 5000) {
    const chunk = issues.slice(i, i + 5000);
    await pool.query(
      `INSERT INTO "Issue" (id, "companyId", "parentId", title, status, "assigneeAgentId", "createdAt", "updatedAt")
       SELECT u.id, $1::uuid, u.parent, 'bench issue', u.status::"IssueStatus", u.assignee, u.created, now()
       FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::uuid[], $6::timestamptz[])
         AS u(id, parent, status, assignee, created)`,
      [
        companyId,
        chunk.map((x) => x.id),
        chunk.map((x) => x.parentId),
        chunk.map((x) => x.status),
        chunk.map((x) => x.assigneeAgentId ?? null),
        chunk.map((x) => x.createdAt ?? DAY_AGO()),
      ],
    );
  }
}

/**
 * A tree of `size` issues under one root, fan-out `fanout` (breadth-first), in the given leaf status.
 * Returns the root, every id and the leaves.
 */
export function treeOf(
  size: number,
  fanout: number,
  leafStatus = 'done',
): { rootId: string; issues: SeedIssue[]; leaves: string[] } {
  const issues: SeedIssue[] = [{ id: randomUUID(), parentId: null, status: 'in_progress' }];
  for (let i = 1; i < size; i++)
    issues.push({ id: randomUUID(), parentId: issues[Math.floor((i - 1) / fanout)].id, status: 'in_progress' });
  const parents = new Set(issues.map((x) => x.parentId));
  const leaves = issues.filter((x) => !parents.has(x.id));
  for (const leaf of leaves) leaf.status = leafStatus;
  return { rootId: issues[0].id, issues, leaves: leaves.map((l) => l.id) };
}

export interface SmallWatchedTree {
  watchdogId: string;
  rootId: string;
  leafId: string;
}

/**
 * `count` watched roots, each with one done child: a subtree at rest whose stop the watchdog has
 * already reviewed (lastReviewedFingerprint is the fingerprint the evaluation will compute), so an
 * evaluation ends in `already_reviewed` and wakes nobody: an idle watchdog.
 */
export async function seedIdleWatchdogs(
  pool: pg.Pool,
  companyId: string,
  agentId: string,
  count: number,
): Promise<SmallWatchedTree[]> {
  const trees = Array.from({ length: count }, () => ({
    watchdogId: randomUUID(),
    rootId: randomUUID(),
    leafId: randomUUID(),
  }));
  await insertIssues(pool, companyId, [
    ...trees.map((t) => ({ id: t.rootId, parentId: null, status: 'in_progress' })),
    ...trees.map((t) => ({ id: t.leafId, parentId: t.rootId, status: 'done' })),
  ]);
  const reviewed = trees.map((t) =>
    stopFingerprint(
      [
        {
          id: t.leafId,
          status: 'done',
          assigneeAgentId: null,
          blockerIds: [],
          pendingInteractionIds: [],
          executionBlockerIds: [],
        },
      ],
      { agentId, instructions: null },
    ),
  );
  await pool.query(
    `INSERT INTO "Watchdog" (id, "companyId", "issueId", "activeIssueId", "agentId", "lastReviewedFingerprint",
       "updatedAt")
     SELECT u.id, $1::uuid, u.issue, u.issue, $2::uuid, u.fp, now()
     FROM unnest($3::uuid[], $4::uuid[], $5::text[]) AS u(id, issue, fp)`,
    [companyId, agentId, trees.map((t) => t.watchdogId), trees.map((t) => t.rootId), reviewed],
  );
  return trees;
}

/** Starts (or signals) each watchdog's workflow the way recovery and every change do: signal-with-start. */
export async function startWatchdogWorkflows(
  h: Harness,
  companyId: string,
  trees: SmallWatchedTree[],
  concurrency = 16,
): Promise<void> {
  await inParallel(trees, concurrency, (t) =>
    h.services.orchestrator.subtreeChanged(
      { watchdogId: t.watchdogId, companyId, issueId: t.rootId, title: 'bench issue' },
      'bench_start',
    ),
  );
}

/** The count of watchdogs whose workflow has evaluated at least once since `since`. */
export async function evaluatedSince(pool: pg.Pool, since: Date, watchdogIds: string[]): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM "Watchdog"
     WHERE id = ANY($1::uuid[]) AND ("lastEvaluation"->>'evaluatedAt')::timestamptz >= $2`,
    [watchdogIds, since],
  );
  return Number(rows[0].n);
}

// ---------------------------------------------------------------------------------------------------------------
// changes

/**
 * One change the way the API makes one: the write itself (the main app's business, sent through the
 * bench's uncounted pool), then, for a material change, treewarden's change record (counted; a worker's dispatcher
 * signals). A status change is material (new stop fingerprint); a title change is bookkeeping and records nothing.
 */
export async function applyChange(
  h: Harness,
  pool: pg.Pool,
  issueId: string,
  change: { status: string } | { title: string },
): Promise<void> {
  if ('title' in change) {
    await pool.query(`UPDATE "Issue" SET title = $2, "updatedAt" = now() WHERE id = $1`, [issueId, change.title]);
    return;
  }
  await pool.query(`UPDATE "Issue" SET status = $2::"IssueStatus", "updatedAt" = now() WHERE id = $1`, [
    issueId,
    change.status,
  ]);
  await recordSubtreeChange(h.services.db, [issueId], 'issue_updated');
}

/**
 * Starts `fn(i)` for i < count at a steady `perSecond` pace without waiting for earlier calls, so a
 * slow call does not slow the offered rate. Resolves with each call's start time once all are done.
 */
export async function paced(count: number, perSecond: number, fn: (i: number) => Promise<void>): Promise<number[]> {
  const startedAt: number[] = [];
  const calls: Promise<void>[] = [];
  const t0 = Date.now();
  for (let i = 0; i < count; i++) {
    const due = t0 + (i * 1000) / perSecond;
    if (due > Date.now()) await sleep(due - Date.now());
    startedAt.push(Date.now());
    calls.push(fn(i));
  }
  await Promise.all(calls);
  return startedAt;
}
