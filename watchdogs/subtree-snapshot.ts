/**
 * The reads an evaluation needs, each in one statement. The walk's per-node facts are gathered
 * set-based: every fact table is read once for the walked ids and joined back, instead of five
 * correlated probes per node (50,000 on a 10,000-issue tree; bench scenario 1).
 */
import { Prisma, type Db } from '../db/prisma';
import { LIVE_RUN_STATUSES, TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import { MAX_WATCHDOG_DEPTH, type SubtreeNode } from '../domain/watchdog';
import { treeWalk } from '../issues/tree-walk';

/** What an evaluation reads of its watchdog. */
export interface WatchdogSnapshot {
  id: string;
  status: string;
  companyId: string;
  issueId: string;
  agentId: string;
  instructions: string | null;
  reviewIssueId: string | null;
  lastReviewedFingerprint: string | null;
  pendingReviewFingerprint: string | null;
  incompleteIssueIds: string[];
}

export interface EvaluationInput {
  watchdog: WatchdogSnapshot | null;
  /** the review task, read only while a review is pending */
  review: { id: string; status: string; assigneeAgentId: string | null } | null;
  /** empty unless the watchdog is active */
  nodes: SubtreeNode[];
}

/**
 * `t` walks from `root` to depth MAX+1 (so "incomplete" can be proven), review tasks excluded;
 * `nodes` is one row per walked issue with its facts. The semi-joins (`IN (SELECT id FROM t)`) keep
 * a fact row from being counted twice.
 */
function walkWithFacts(root: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    ${treeWalk({
      name: 't',
      direction: 'down',
      from: Prisma.sql`FROM "Issue" i WHERE i.id = ${root}`,
      columns: ['status', 'assigneeAgentId', 'createdAt'],
      enterIf: Prisma.sql`i."originKind" <> ${TASK_WATCHDOG_ORIGIN}`,
      maxDepth: MAX_WATCHDOG_DEPTH + 1,
    })},
    runs AS (
      SELECT "issueId", bool_or(status::text = ANY(${LIVE_RUN_STATUSES}::text[])) AS live
      FROM "Run" WHERE "issueId" IN (SELECT id FROM t) GROUP BY "issueId"
    ),
    wakes AS (SELECT DISTINCT "issueId" FROM "WakeRequest" WHERE status = 'queued' AND "issueId" IN (SELECT id FROM t)),
    blockers AS (
      SELECT "issueId", array_agg("blockerIssueId"::text) AS ids
      FROM "IssueBlocker" WHERE "issueId" IN (SELECT id FROM t) GROUP BY "issueId"
    ),
    pending AS (
      SELECT "issueId", array_agg(id::text) AS ids
      FROM "Interaction" WHERE status = 'pending' AND "issueId" IN (SELECT id FROM t) GROUP BY "issueId"
    ),
    reconciliations AS (
      SELECT "issueId", array_agg(id::text) AS ids
      FROM "ExecutionBlocker" WHERE status = 'active' AND "issueId" IN (SELECT id FROM t) GROUP BY "issueId"
    ),
    nodes AS (
      SELECT t.id::text, t."parentId"::text, t.depth, t.status::text, t."assigneeAgentId"::text, t."createdAt",
        coalesce(runs.live, false) AS "hasLiveRun", wakes."issueId" IS NOT NULL AS "hasQueuedWake",
        runs."issueId" IS NOT NULL AS "hasAnyRun", blockers.ids AS "blockerIds",
        pending.ids AS "pendingInteractionIds", reconciliations.ids AS "executionBlockerIds"
      FROM t
      LEFT JOIN runs ON runs."issueId" = t.id
      LEFT JOIN wakes ON wakes."issueId" = t.id
      LEFT JOIN blockers ON blockers."issueId" = t.id
      LEFT JOIN pending ON pending."issueId" = t.id
      LEFT JOIN reconciliations ON reconciliations."issueId" = t.id
    )`;
}

type NodeRow = Omit<SubtreeNode, 'blockerIds' | 'pendingInteractionIds' | 'executionBlockerIds'> & {
  blockerIds: string[] | null;
  pendingInteractionIds: string[] | null;
  executionBlockerIds: string[] | null;
};

const toNode = (n: NodeRow): SubtreeNode => ({
  ...n,
  blockerIds: n.blockerIds ?? [],
  pendingInteractionIds: n.pendingInteractionIds ?? [],
  executionBlockerIds: n.executionBlockerIds ?? [],
});

/**
 * The watchdog, its pending review task and its subtree, in one statement: an evaluation that
 * changes nothing costs this read and the write of its summary (bench scenario 2). The watchdog and
 * review ride as JSON on the root's row only (on the one row of nulls when nothing was walked):
 * repeating them on 10,000 rows would cost more than the walk's facts.
 */
export async function loadEvaluationInput(db: Db, watchdogId: string): Promise<EvaluationInput> {
  const rows = await db.$queryRaw<(Partial<NodeRow> & Pick<EvaluationInput, 'watchdog' | 'review'>)[]>`
    WITH RECURSIVE wd AS (SELECT * FROM "Watchdog" WHERE id = ${watchdogId}::uuid),
    ${walkWithFacts(Prisma.sql`(SELECT "issueId" FROM wd WHERE status = 'active')`)},
    header AS (
      SELECT
        (SELECT json_build_object(
          'id', id, 'status', status, 'companyId', "companyId", 'issueId', "issueId", 'agentId', "agentId",
          'instructions', instructions, 'reviewIssueId', "reviewIssueId",
          'lastReviewedFingerprint', "lastReviewedFingerprint", 'pendingReviewFingerprint', "pendingReviewFingerprint",
          'incompleteIssueIds', "incompleteIssueIds") FROM wd) AS watchdog,
        (SELECT json_build_object('id', i.id, 'status', i.status, 'assigneeAgentId', i."assigneeAgentId")
          FROM wd JOIN "Issue" i ON i.id = wd."reviewIssueId" WHERE wd."pendingReviewFingerprint" IS NOT NULL) AS review
    )
    SELECT CASE WHEN nodes.depth IS NULL OR nodes.depth = 1 THEN header.watchdog END AS watchdog,
      CASE WHEN nodes.depth IS NULL OR nodes.depth = 1 THEN header.review END AS review, nodes.*
    FROM header LEFT JOIN nodes ON true`;
  const head = rows.find((r) => r.depth === null || r.depth === 1);
  const nodes = rows.filter((r): r is NodeRow & typeof r => r.id !== null && r.id !== undefined).map(toNode);
  return { watchdog: head?.watchdog ?? null, review: head?.review ?? null, nodes };
}
