/**
 * The reads an evaluation needs, in one statement. The walk's per-node facts are gathered set-based: every fact
 * table is read once for the walked ids, instead of five correlated probes per node (50,000 on a 10,000-issue tree;
 * bench scenario 1).
 */
import { Prisma, type Db } from '../db/prisma';
import { LIVE_RUN_STATUSES, TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import { MAX_WATCHDOG_DEPTH, NO_IDS, type SubtreeNode, type WatchdogMode } from '../domain/watchdog';
import { ESCALATION_INTERACTION_KIND } from '../domain/watchdog-recheck';
import { treeWalk } from '../tree/walk';

/** What an evaluation reads of its watchdog. */
export interface WatchdogSnapshot {
  id: string;
  status: string;
  companyId: string;
  issueId: string;
  agentId: string;
  instructions: string | null;
  mode: WatchdogMode;
  reviewIssueId: string | null;
  /** the stop the last evaluation saw (an observe-mode watchdog records each one once) */
  lastObservedFingerprint: string | null;
  lastReviewedFingerprint: string | null;
  pendingReviewFingerprint: string | null;
  incompleteIssueIds: string[];
  /** bumped by the change dispatcher for every round that reaches this watchdog */
  changeVersion: number;
  /** the reviewed stop's conditional acceptance (epoch milliseconds, as createdAtMs), its re-arms and escalation */
  acceptedUntilMs: number | null;
  recheckCount: number;
  repeatLimit: number;
  escalatedFingerprint: string | null;
}

export interface EvaluationInput {
  watchdog: WatchdogSnapshot | null;
  /** the review task, read only while a review is pending */
  review: { id: string; status: string; assigneeAgentId: string | null } | null;
  /** empty unless the watchdog is active */
  nodes: SubtreeNode[];
}

/** Facts most issues do not have, read as rows of their own rather than as columns on every node. */
type SparseFact = 'queued_wake' | 'pending_monitor' | 'blocker' | 'pending_interaction' | 'execution_blocker';

type Header = Pick<EvaluationInput, 'watchdog' | 'review'>;

type Row =
  /** `ref` is the JSON of {@link Header}: two columns on one row rather than on all of them */
  | { kind: 'header'; ref: string }
  | ({ kind: 'node' } & Pick<
      SubtreeNode,
      'id' | 'parentId' | 'depth' | 'status' | 'assigneeAgentId' | 'createdAtMs' | 'hasAnyRun' | 'hasLiveRun'
    >)
  /** `ref` is the blocker, interaction or execution blocker; null for a queued wake or a pending monitor */
  | { kind: SparseFact; id: string; ref: string | null };

/**
 * `t` walks from `root` to depth MAX+1 (so "incomplete" can be proven), review tasks excluded. Every walked issue
 * is one `node` row, with its run facts as columns: most issues of a working tree have had runs. The sparse facts
 * follow as one row each, so a tree at rest costs no more than its nodes. The semi-joins (`IN (SELECT id FROM t)`)
 * keep a fact row from being counted twice.
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
    facts AS (
      SELECT 'queued_wake' AS kind, "issueId", NULL AS ref
        FROM "WakeRequest" WHERE status = 'queued' AND "issueId" IN (SELECT id FROM t)
      UNION ALL SELECT 'pending_monitor', "issueId", NULL
        FROM "IssueMonitor" WHERE status = 'pending' AND "issueId" IN (SELECT id FROM t)
      UNION ALL SELECT 'blocker', "issueId", "blockerIssueId"::text
        FROM "IssueBlocker" WHERE "issueId" IN (SELECT id FROM t)
      UNION ALL SELECT 'pending_interaction', "issueId", id::text
        FROM "Interaction" WHERE status = 'pending' AND kind <> ${ESCALATION_INTERACTION_KIND}
          AND "issueId" IN (SELECT id FROM t)
      UNION ALL SELECT 'execution_blocker', "issueId", id::text
        FROM "ExecutionBlocker" WHERE status = 'active' AND "issueId" IN (SELECT id FROM t)
    ),
    rows AS (
      SELECT 'node' AS kind, t.id::text, t."parentId"::text, t.depth, t.status::text, t."assigneeAgentId"::text,
        round(date_part('epoch', t."createdAt") * 1000) AS "createdAtMs",
        runs."issueId" IS NOT NULL AS "hasAnyRun", coalesce(runs.live, false) AS "hasLiveRun", NULL AS ref
      FROM t LEFT JOIN runs ON runs."issueId" = t.id
      UNION ALL
      SELECT kind, "issueId"::text, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ref FROM facts
    )`;
}

/** Node rows with their sparse facts attached; a fact row always names a walked issue (the semi-joins). */
function assembleNodes(rows: Row[]): SubtreeNode[] {
  const nodes = new Map<string, SubtreeNode>();
  for (const row of rows) {
    if (row.kind !== 'node') continue;
    // built field by field: one object shape for all nodes keeps classification fast (bench scenario 1)
    nodes.set(row.id, {
      id: row.id,
      parentId: row.parentId,
      depth: row.depth,
      status: row.status,
      assigneeAgentId: row.assigneeAgentId,
      createdAtMs: row.createdAtMs,
      hasAnyRun: row.hasAnyRun,
      hasLiveRun: row.hasLiveRun,
      hasQueuedWake: false,
      hasPendingMonitor: false,
      blockerIds: NO_IDS,
      pendingInteractionIds: NO_IDS,
      executionBlockerIds: NO_IDS,
    });
  }
  for (const row of rows) {
    if (row.kind === 'node' || row.kind === 'header') continue;
    const node = nodes.get(row.id)!;
    if (row.kind === 'queued_wake') node.hasQueuedWake = true;
    else if (row.kind === 'pending_monitor') node.hasPendingMonitor = true;
    else if (row.kind === 'blocker') node.blockerIds = [...node.blockerIds, row.ref!];
    else if (row.kind === 'pending_interaction') node.pendingInteractionIds = [...node.pendingInteractionIds, row.ref!];
    else node.executionBlockerIds = [...node.executionBlockerIds, row.ref!];
  }
  return [...nodes.values()];
}

/**
 * The watchdog, its pending review task and its subtree, in one statement: an evaluation that changes nothing
 * costs this read and the write of its summary (bench scenario 2). The watchdog and review ride on one `header`
 * row, there even when nothing was walked.
 */
export async function loadEvaluationInput(db: Db, watchdogId: string): Promise<EvaluationInput> {
  const rows = await db.$queryRaw<Row[]>`
    WITH RECURSIVE wd AS (SELECT * FROM "Watchdog" WHERE id = ${watchdogId}::uuid),
    ${walkWithFacts(Prisma.sql`(SELECT "issueId" FROM wd WHERE status = 'active')`)}
    SELECT 'header' AS kind, NULL AS id, NULL AS "parentId", NULL::int AS depth, NULL AS status,
      NULL AS "assigneeAgentId", NULL::float8 AS "createdAtMs", NULL::boolean AS "hasAnyRun",
      NULL::boolean AS "hasLiveRun",
      json_build_object(
        'watchdog', (SELECT json_build_object(
          'id', id, 'status', status, 'companyId', "companyId", 'issueId', "issueId", 'agentId', "agentId",
          'instructions', instructions, 'mode', mode, 'reviewIssueId', "reviewIssueId",
          'lastObservedFingerprint', "lastObservedFingerprint", 'lastReviewedFingerprint', "lastReviewedFingerprint",
          'pendingReviewFingerprint', "pendingReviewFingerprint",
          'incompleteIssueIds', "incompleteIssueIds", 'changeVersion', "changeVersion",
          'acceptedUntilMs', round(date_part('epoch', "acceptedUntil") * 1000), 'recheckCount', "recheckCount",
          'repeatLimit', "repeatLimit", 'escalatedFingerprint', "escalatedFingerprint") FROM wd),
        'review', (SELECT json_build_object('id', i.id, 'status', i.status, 'assigneeAgentId', i."assigneeAgentId")
          FROM wd JOIN "Issue" i ON i.id = wd."reviewIssueId" WHERE wd."pendingReviewFingerprint" IS NOT NULL)
      )::text AS ref
    UNION ALL
    SELECT * FROM rows`;
  const header = rows.find((r) => r.kind === 'header');
  if (!header || header.kind !== 'header') throw new Error('evaluation read returned no header row');
  const { watchdog, review } = JSON.parse(header.ref) as Header;
  return { watchdog, review, nodes: assembleNodes(rows) };
}
