/**
 * An issue subtree for people (the console's tree page, `treewarden tree`): each node with its status,
 * assignee, latest run, holds, watchdog, pending monitor and active execution blockers. Read level by level so a large
 * tree is fetched as it is expanded, never whole.
 */
import type { Db } from '../db/prisma';
import { LIVE_RUN_STATUSES, TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import type { WatchdogMode } from '../domain/watchdog';
import { activeHoldsCovering } from '../tree/queries';

/** Children listed per node and request; the rest is paged with `offset`. */
export const TREE_PAGE_MAX = 500;
/** Nodes in one answer, whatever the depth asked for: deeper levels are read by expanding. */
export const TREE_NODES_MAX = 5_000;

/** An issue's active watchdog as its badge shows it (with the review task it reuses, null until the first review). */
export interface WatchdogBadge {
  id: string;
  mode: WatchdogMode;
  lastState: string | null;
  triggerCount: number;
  reviewIssueId: string | null;
}

export interface TreeNode {
  id: string;
  title: string;
  status: string;
  assignee: { id: string; name: string } | null;
  childCount: number;
  /** the newest run of the issue */
  run: {
    id: string;
    status: string;
    live: boolean;
    silentState: string | null;
    failureState: string | null;
    /** why it was woken: `liveness_recovery` shows a stall that was recovered */
    wakeReason: string;
  } | null;
  /** active holds rooted at this node */
  holds: { id: string }[];
  /** active holds covering this node (rooted here or above) */
  heldBy: string[];
  watchdog: WatchdogBadge | null;
  /** a watchdog's review task: the watched issue it reviews */
  reviewOf: { watchedIssueId: string } | null;
  /** its pending one-shot monitor: wakes its assignee at `at` (ISO-8601) */
  monitor: { at: string; note: string | null } | null;
  blockers: { id: string; runId: string | null; nextAction: string }[];
  /** null when not expanded in this answer ([] for a leaf) */
  children: TreeNode[] | null;
  /** children not listed here (past the page) */
  moreChildren: number;
}

type IssueRow = {
  id: string;
  title: string;
  status: string;
  assigneeAgentId: string | null;
  assignee: { name: string } | null;
  originKind: string;
  originId: string | null;
  _count: { children: number };
};

const issueSelect = {
  id: true,
  title: true,
  status: true,
  assigneeAgentId: true,
  assignee: { select: { name: true } },
  originKind: true,
  originId: true,
  _count: { select: { children: true } },
} as const;

/** Badges for a batch of issues: five statements per level, whatever its width. */
async function decorate(db: Db, rows: IssueRow[], heldAbove: Map<string, string[]>): Promise<TreeNode[]> {
  const ids = rows.map((r) => r.id);
  const [runs, holds, watchdogs, monitors, blockers] = await Promise.all([
    db.run.findMany({
      where: { issueId: { in: ids } },
      distinct: ['issueId'],
      orderBy: [{ issueId: 'asc' }, { createdAt: 'desc' }],
      select: { id: true, issueId: true, status: true, silentState: true, failureState: true, wakeReason: true },
    }),
    db.treeHold.findMany({
      where: { rootIssueId: { in: ids }, status: 'active' },
      select: { id: true, rootIssueId: true },
    }),
    db.watchdog.findMany({
      where: { activeIssueId: { in: ids } },
      select: { id: true, issueId: true, mode: true, lastEvaluation: true, triggerCount: true, reviewIssueId: true },
    }),
    db.issueMonitor.findMany({
      where: { issueId: { in: ids }, status: 'pending' },
      select: { issueId: true, at: true, note: true },
    }),
    db.executionBlocker.findMany({
      where: { issueId: { in: ids }, status: 'active' },
      orderBy: { createdAt: 'asc' },
      select: { id: true, issueId: true, runId: true, nextAction: true },
    }),
  ]);
  const runOf = new Map(runs.map((r) => [r.issueId, r]));
  const watchdogOf = new Map(watchdogs.map((w) => [w.issueId, w]));
  const monitorOf = new Map(monitors.map((m) => [m.issueId, m]));
  return rows.map((row) => {
    const run = runOf.get(row.id);
    const watchdog = watchdogOf.get(row.id);
    const monitor = monitorOf.get(row.id);
    const rooted = holds.filter((h) => h.rootIssueId === row.id).map((h) => ({ id: h.id }));
    return {
      id: row.id,
      title: row.title,
      status: row.status,
      assignee: row.assigneeAgentId
        ? { id: row.assigneeAgentId, name: row.assignee?.name ?? row.assigneeAgentId }
        : null,
      childCount: row._count.children,
      run: run
        ? {
            id: run.id,
            status: run.status,
            live: (LIVE_RUN_STATUSES as readonly string[]).includes(run.status),
            silentState: run.silentState,
            failureState: run.failureState,
            wakeReason: run.wakeReason,
          }
        : null,
      holds: rooted,
      heldBy: [...(heldAbove.get(row.id) ?? []), ...rooted.map((h) => h.id)],
      watchdog: watchdog
        ? {
            id: watchdog.id,
            mode: watchdog.mode,
            lastState: (watchdog.lastEvaluation as { state?: string } | null)?.state ?? null,
            triggerCount: watchdog.triggerCount,
            reviewIssueId: watchdog.reviewIssueId,
          }
        : null,
      reviewOf: row.originKind === TASK_WATCHDOG_ORIGIN && row.originId ? { watchedIssueId: row.originId } : null,
      monitor: monitor ? { at: monitor.at.toISOString(), note: monitor.note } : null,
      blockers: blockers
        .filter((b) => b.issueId === row.id)
        .map((b) => ({ id: b.id, runId: b.runId, nextAction: b.nextAction })),
      // a leaf's children are known: none
      children: row._count.children === 0 ? [] : null,
      moreChildren: 0,
    };
  });
}

/**
 * The issue and `depth` levels below it (0: the issue alone). `offset` pages the root's children;
 * deeper levels list their first page. Null when the issue is not the company's.
 */
export async function treeView(
  db: Db,
  companyId: string,
  issueId: string,
  options: { depth: number; offset: number; limit: number },
): Promise<TreeNode | null> {
  const root = await db.issue.findUnique({ where: { id: issueId }, select: { ...issueSelect, companyId: true } });
  if (!root || root.companyId !== companyId) return null;
  const covering = (await activeHoldsCovering(db, issueId)).filter((h) => h.rootIssueId !== issueId).map((h) => h.id);
  const [node] = await decorate(db, [root], new Map([[issueId, covering]]));
  let level = [node];
  let listed = 1;
  for (let d = 0; d < options.depth && level.length > 0 && listed < TREE_NODES_MAX; d++) {
    const parents = level.filter((n) => n.childCount > 0);
    if (parents.length === 0) break;
    const take = Math.min(options.limit, TREE_NODES_MAX - listed);
    const rows = await Promise.all(
      parents.map((p) =>
        db.issue.findMany({
          where: { parentId: p.id },
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
          skip: d === 0 ? options.offset : 0,
          take,
          select: issueSelect,
        }),
      ),
    );
    const heldAbove = new Map<string, string[]>();
    parents.forEach((p, i) => rows[i].forEach((r) => heldAbove.set(r.id, p.heldBy)));
    const children = await decorate(db, rows.flat(), heldAbove);
    let at = 0;
    parents.forEach((p, i) => {
      p.children = children.slice(at, at + rows[i].length);
      at += rows[i].length;
      p.moreChildren = Math.max(0, p.childCount - (d === 0 ? options.offset : 0) - p.children.length);
    });
    listed += children.length;
    level = children;
  }
  return node;
}
