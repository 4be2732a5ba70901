/** Tree queries over Issue.parentId, built from the one bounded walk of `walk.ts`. */
import { Prisma, type Tx } from '../db/prisma';
import { TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import { treeWalk } from './walk';

const fromIssue = (issueId: string) => Prisma.sql`FROM "Issue" i WHERE i.id = ${issueId}::uuid`;

/** The walk up from each of `issueIds` at once (`up`), every row carrying the id it started from (`startId`). */
const upFromEach = (issueIds: readonly string[]) =>
  treeWalk({
    name: 'up',
    direction: 'up',
    from: Prisma.sql`FROM "Issue" i WHERE i.id = ANY(${issueIds}::uuid[])`,
    carry: { startId: Prisma.sql`i.id`, startOrigin: Prisma.sql`i."originKind"` },
    distinct: true,
  });

/** The issue itself and its ancestors, nearest first. */
export async function ancestorIds(tx: Tx, issueId: string): Promise<string[]> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    WITH RECURSIVE ${treeWalk({ name: 'up', direction: 'up', from: fromIssue(issueId) })}
    SELECT id::text FROM up ORDER BY depth`;
  return rows.map((r) => r.id);
}

/** The issue and every descendant (no exclusions), with depth from the root (root = 0). */
export async function subtree(
  tx: Tx,
  rootId: string,
): Promise<{ id: string; parentId: string | null; depth: number }[]> {
  return tx.$queryRaw`
    WITH RECURSIVE ${treeWalk({ name: 'down', direction: 'down', from: fromIssue(rootId) })}
    SELECT id::text, "parentId"::text, depth - 1 AS depth FROM down ORDER BY depth, id`;
}

/** Active pause holds rooted at the issue or one of its ancestors: the walk up joined to the holds, one statement. */
export async function activeHoldsCovering(tx: Tx, issueId: string): Promise<{ id: string; rootIssueId: string }[]> {
  return tx.$queryRaw`
    WITH RECURSIVE ${treeWalk({ name: 'up', direction: 'up', from: fromIssue(issueId) })}
    SELECT h.id::text, h."rootIssueId"::text
    FROM "TreeHold" h JOIN up ON up.id = h."rootIssueId"
    WHERE h.status = 'active'`;
}

/**
 * Which of `issueIds` an active hold covers (rooted at them or above): one walk up for all of them (liveness
 * recovery's pass asks it of every idle issue and every stranded wake at once).
 */
export async function heldIssueIds(tx: Tx, issueIds: readonly string[]): Promise<Set<string>> {
  const unique = [...new Set(issueIds)];
  if (unique.length === 0) return new Set();
  const rows = await tx.$queryRaw<{ issueId: string }[]>`
    WITH RECURSIVE ${upFromEach(unique)}
    SELECT DISTINCT up."startId"::text AS "issueId"
    FROM up JOIN "TreeHold" h ON h."rootIssueId" = up.id AND h.status = 'active'`;
  return new Set(rows.map((r) => r.issueId));
}

/**
 * Active watchdogs whose watched issue is one of `issueIds` or above them, each with the ids among `issueIds` it is
 * above (the change dispatcher gives each watchdog the reasons of its own changes), which of those are review tasks,
 * and its own review task (whether a change reaches it: domain/change-reach.ts). It runs once per dispatch round, so
 * it is one statement: the ancestor walk joined to the watchdogs and their titles (was three: walk, watchdogs,
 * titles; bench scenario 2).
 */
export async function watchdogsAbove(tx: Tx, issueIds: readonly string[]): Promise<WatchdogAbove[]> {
  const unique = [...new Set(issueIds)];
  if (unique.length === 0) return [];
  const rows = await tx.$queryRaw<(Omit<WatchdogAbove, 'issue'> & { title: string })[]>`
    WITH RECURSIVE ${upFromEach(unique)}
    SELECT w.id::text, w."companyId"::text, w."issueId"::text, w."reviewIssueId"::text, i.title,
      array_agg(DISTINCT up."startId"::text) AS "changedIssueIds",
      coalesce(array_agg(DISTINCT up."startId"::text) FILTER (WHERE up."startOrigin" = ${TASK_WATCHDOG_ORIGIN}),
        '{}') AS "reviewTaskIds"
    FROM "Watchdog" w JOIN "Issue" i ON i.id = w."issueId" JOIN up ON up.id = w."activeIssueId"
    GROUP BY w.id, i.id`;
  return rows.map(({ title, ...watchdog }) => ({ ...watchdog, issue: { title } }));
}

export interface WatchdogAbove {
  id: string;
  companyId: string;
  issueId: string;
  issue: { title: string };
  /** its review task, once it woke one */
  reviewIssueId: string | null;
  /** the ones of the asked ids at or below this watchdog's issue */
  changedIssueIds: string[];
  /** the ones of those that are review tasks (of any watchdog) */
  reviewTaskIds: string[];
}
