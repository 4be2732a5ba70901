/**
 * A company at a glance (the console's company page): trees with their active holds, watchdogs with
 * their last verdict, runs in progress, open execution blockers and unacknowledged findings.
 */
import type { Db } from '../db/prisma';
import { LIVE_RUN_STATUSES } from '../domain/statuses';

/** Rows per section: the page is a dashboard, not an export. */
const SECTION_MAX = 200;

export async function companyOverview(db: Db, companyId: string) {
  const [company, roots, watchdogs, runs, blockers, findings] = await Promise.all([
    db.company.findUniqueOrThrow({ where: { id: companyId }, select: { id: true, name: true } }),
    db.issue.findMany({
      where: { companyId, parentId: null },
      orderBy: { createdAt: 'asc' },
      take: SECTION_MAX,
      select: {
        id: true,
        title: true,
        status: true,
        _count: { select: { children: true } },
        treeHolds: { where: { status: 'active' }, select: { id: true, reason: true, createdAt: true } },
      },
    }),
    db.watchdog.findMany({
      where: { companyId, status: 'active' },
      orderBy: { createdAt: 'asc' },
      take: SECTION_MAX,
      include: { issue: { select: { title: true } } },
    }),
    db.run.findMany({
      where: { companyId, status: { in: [...LIVE_RUN_STATUSES] } },
      orderBy: { createdAt: 'asc' },
      take: SECTION_MAX,
      include: { issue: { select: { title: true } } },
    }),
    db.executionBlocker.findMany({
      where: { companyId, status: 'active' },
      orderBy: { createdAt: 'asc' },
      take: SECTION_MAX,
      include: { issue: { select: { title: true } } },
    }),
    // a finding stays open until its run is acknowledged, recovered or superseded
    db.finding.findMany({
      where: { run: { companyId, failureState: { in: ['uninspected', 'inspected'] } } },
      orderBy: { createdAt: 'desc' },
      take: SECTION_MAX,
      include: { run: { select: { issueId: true, status: true, failureState: true } } },
    }),
  ]);
  return {
    company,
    trees: roots.map((r) => ({
      id: r.id,
      title: r.title,
      status: r.status,
      childCount: r._count.children,
      activeHolds: r.treeHolds,
    })),
    watchdogs: watchdogs.map((w) => ({
      id: w.id,
      issueId: w.issueId,
      issueTitle: w.issue.title,
      lastState: (w.lastEvaluation as { state?: string } | null)?.state ?? null,
      triggerCount: w.triggerCount,
      lastTriggeredAt: w.lastTriggeredAt,
    })),
    runs: runs.map((r) => ({
      id: r.id,
      issueId: r.issueId,
      issueTitle: r.issue.title,
      status: r.status,
      silentState: r.silentState,
      host: r.host,
      startedAt: r.startedAt,
    })),
    blockers: blockers.map((b) => ({
      id: b.id,
      issueId: b.issueId,
      issueTitle: b.issue.title,
      runId: b.runId,
      cause: b.cause,
      nextAction: b.nextAction,
      createdAt: b.createdAt,
    })),
    findings: findings.map((f) => ({
      id: f.id,
      runId: f.runId,
      issueId: f.run.issueId,
      verdict: f.verdict,
      runStatus: f.run.status,
      failureState: f.run.failureState,
      createdAt: f.createdAt,
    })),
  };
}
