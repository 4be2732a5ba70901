/**
 * Reads the facts a postmortem counts (domain/postmortem.ts) for one issue tree, or for the whole
 * fleet (the workers' /metrics). Everything comes from recorded rows: runs, their verified stops,
 * findings, jobs and the watchdogs' `stopped` verdicts in the activity log.
 */
import type { Db } from '../db/prisma';
import { computePostmortem, type Postmortem, type PostmortemFacts, type RunFacts } from '../domain/postmortem';
import { TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import { subtree } from '../tree/queries';

type Scope = { issueIds: string[] } | 'fleet';

/** The postmortem of an issue and its whole subtree (review tasks included: they are recovery work). */
export async function issueTreePostmortem(db: Db, rootIssueId: string, now = new Date()): Promise<Postmortem> {
  const ids = (await subtree(db, rootIssueId)).map((n) => n.id);
  return computePostmortem(await postmortemFacts(db, { issueIds: ids }, now));
}

export async function fleetPostmortem(db: Db, now = new Date()): Promise<Postmortem> {
  return computePostmortem(await postmortemFacts(db, 'fleet', now));
}

const survivorsOf = (stopResult: unknown): number => {
  const attempts = (stopResult as { attempts?: { verdict?: string; survivors?: unknown[] }[] } | null)?.attempts ?? [];
  const partial = attempts.find((a) => a.verdict === 'stop-partial');
  return Array.isArray(partial?.survivors) ? partial.survivors.length : 0;
};

async function postmortemFacts(db: Db, scope: Scope, now: Date): Promise<PostmortemFacts> {
  const runWhere = scope === 'fleet' ? {} : { issueId: { in: scope.issueIds } };
  const runs = await db.run.findMany({
    where: runWhere,
    select: {
      id: true,
      issueId: true,
      status: true,
      failureState: true,
      startedAt: true,
      finishedAt: true,
      endReason: true,
      stopResult: true,
      lastApiActivityAt: true,
      silentState: true,
      silentDecision: true,
      usageTokens: true,
      usageCost: true,
      usageCurrency: true,
      acpSessionId: true,
    },
  });
  const runIds = runs.map((r) => r.id);
  const [findings, jobs, verdicts] = await Promise.all([
    db.finding.findMany({
      where: { runId: { in: runIds }, verdict: { in: ['silent-running', 'orphan-reaped'] } },
      select: { runId: true, verdict: true, createdAt: true, details: true },
    }),
    db.job.findMany({
      where: { ownerRunId: { in: runIds } },
      select: { kind: true, stopReason: true, stopResult: true },
    }),
    db.activityLog.findMany({
      where: {
        action: 'issue.task_watchdog_triggered',
        ...(scope === 'fleet' ? {} : { entityId: { in: scope.issueIds } }),
      },
      select: { entityId: true, createdAt: true },
    }),
  ]);
  const byId = new Map(runs.map((r) => [r.id, r]));
  const subtrees = new Map<string, string[]>();
  const stoppedVerdicts: PostmortemFacts['stoppedVerdicts'] = [];
  for (const v of verdicts) {
    if (!subtrees.has(v.entityId)) subtrees.set(v.entityId, await watchedSubtree(db, v.entityId));
    stoppedVerdicts.push({ at: v.createdAt, subtreeIssueIds: subtrees.get(v.entityId)! });
  }
  return {
    runs: runs.map((r): RunFacts => ({
      id: r.id,
      issueId: r.issueId,
      status: r.status,
      failureState: r.failureState,
      startedAt: r.startedAt,
      finishedAt: r.finishedAt,
      endReason: r.endReason,
      stopSurvivors: survivorsOf(r.stopResult),
      usageTokens: r.usageTokens,
      usageCost: r.usageCost,
      usageCurrency: r.usageCurrency,
      acpSessionId: r.acpSessionId,
    })),
    stoppedVerdicts,
    silentFindings: findings
      .filter((f) => f.verdict === 'silent-running')
      .map((f) => {
        const run = byId.get(f.runId)!;
        const contradicted =
          (run.lastApiActivityAt !== null && run.lastApiActivityAt > f.createdAt) ||
          run.status === 'succeeded' ||
          (run.silentState === 'ok' && run.silentDecision === null);
        return { runId: f.runId, at: f.createdAt, contradicted };
      }),
    orphanMonitors: jobs.filter((j) => j.kind === 'monitor' && j.stopReason === 'owner_terminal').length,
    reapedProcesses: findings
      .filter((f) => f.verdict === 'orphan-reaped')
      .reduce((n, f) => n + (((f.details as { processes?: unknown[] }).processes ?? []).length || 0), 0),
    jobStopSurvivors: jobs.reduce((n, j) => n + survivorsOf(j.stopResult), 0),
    now,
  };
}

/** The subtree a watchdog watches: its issue and descendants, without the review task's branch. */
async function watchedSubtree(db: Db, watchedIssueId: string): Promise<string[]> {
  const nodes = await subtree(db, watchedIssueId);
  const reviews = new Set(
    (
      await db.issue.findMany({
        where: { id: { in: nodes.map((n) => n.id) }, originKind: TASK_WATCHDOG_ORIGIN },
        select: { id: true },
      })
    ).map((i) => i.id),
  );
  const excluded = new Set<string>();
  for (const n of nodes) if (reviews.has(n.id) || (n.parentId && excluded.has(n.parentId))) excluded.add(n.id);
  return nodes.filter((n) => !excluded.has(n.id)).map((n) => n.id);
}
