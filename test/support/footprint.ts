/** What a refused request could have written in a company: tests compare it before and after. */
import type { Db } from '../../db/prisma';

export async function companyFootprint(db: Db, companyId: string) {
  const where = { companyId };
  return {
    issues: await db.issue.findMany({
      where,
      select: { id: true, title: true, status: true, blockedReason: true, assigneeAgentId: true },
      orderBy: { id: 'asc' },
    }),
    comments: await db.comment.count({ where }),
    wakes: await db.wakeRequest.count({ where }),
    runs: await db.run.findMany({
      where,
      select: { id: true, stopRequestedAt: true, failureState: true, silentDecision: true },
      orderBy: { id: 'asc' },
    }),
    jobs: await db.job.count({ where }),
    evidence: await db.gateEvidence.count({ where: { run: { companyId } } }),
    interactions: await db.interaction.findMany({ where, select: { id: true, status: true }, orderBy: { id: 'asc' } }),
    holds: await db.treeHold.count({ where }),
    monitors: await db.issueMonitor.findMany({ where, select: { issueId: true, status: true, version: true } }),
    watchdogs: await db.watchdog.count({ where }),
    agents: await db.agent.findMany({ where, select: { id: true, name: true, status: true }, orderBy: { id: 'asc' } }),
    activity: await db.activityLog.count({ where }),
  };
}
