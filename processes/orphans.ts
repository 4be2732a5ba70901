/**
 * Orphan reaping, when a worker starts on a host (and now and then after): runs and jobs recorded
 * on this host that are terminal, or whose workflow has closed, yet still own live processes here
 * (found by owner token in /proc/<pid>/environ, or in their cgroup) get the verified stop; stops pending on this host
 * (their host had no live worker) are verified now, and stops that left survivors (`stop-partial`)
 * again, until one finds nothing left. One `orphan-reaped` finding per run: two workers starting on
 * one host find the same orphans, and a database claim lets one of them act.
 */
import { isTerminalRunStatus } from '../domain/statuses';
import { workflowId } from '../domain/ids';
import type { Deps } from '../runtime/deps';
import { occupiedWorkCgroups, removeCgroup } from './cgroups';
import { partialStopsOn, pendingStopsOn } from './host-stops';
import { liveOwnerTokens, ownedProcesses, verifiedStop, type StopResult } from './process-table';
import { runFiles } from '../runs/run-files';
import { emitFinding, recordStopResult } from '../runs/supervision';

export interface ReapReport {
  /** runs and jobs whose live processes were stopped */
  reaped: string[];
  /** pending stops this host has now verified, and partial ones it now verified clean */
  verified: string[];
}

type Candidate = {
  id: string;
  ownerToken: string | null;
  processGroupId: number | null;
  cgroupPath: string | null;
  hostId: string | null;
  stopResult: unknown;
};

export async function reapOrphans(deps: Deps): Promise<ReapReport> {
  const tokens = [...liveOwnerTokens()];
  // a process that cleared its environment is still in its cgroup
  const contained = occupiedWorkCgroups(deps.containment);
  // only work recorded on this host: a worker whose /proc also shows other hosts' processes (a
  // parent PID namespace) must not stop them
  const live = { hostId: deps.hostId, OR: [{ ownerToken: { in: tokens } }, { id: { in: contained } }] };
  const anyLive = tokens.length + contained.length > 0;
  const [pending, partial, runs, jobs] = await Promise.all([
    pendingStopsOn(deps, deps.hostId),
    partialStopsOn(deps, deps.hostId),
    anyLive ? deps.db.run.findMany({ where: live }) : [],
    anyLive ? deps.db.job.findMany({ where: live }) : [],
  ]);
  const report: ReapReport = { reaped: [], verified: [] };
  const pendingIds = new Set([...pending.runs, ...pending.jobs].map((w) => w.id));
  const orphanRuns = [];
  for (const run of runs)
    if (
      !pendingIds.has(run.id) &&
      (isTerminalRunStatus(run.status) || !(await deps.orchestrator.isWorkflowOpen(workflowId.agentRun(run.id))))
    )
      orphanRuns.push(run);
  const orphanJobs = [];
  for (const job of jobs)
    if (
      !pendingIds.has(job.id) &&
      (job.status !== 'running' || !(await deps.orchestrator.isWorkflowOpen(workflowId.backgroundJob(job.id))))
    )
      orphanJobs.push(job);

  for (const run of [...pending.runs, ...orphanRuns]) {
    if (!(await claimReap(deps, run.id))) continue;
    const { found, result } = await stopHere(deps, run, runFiles(run.id, run.workdir).writerLock);
    await recordStopResult(deps, run.id, { ...result, host: deps.hostId, previous: run.stopResult } as StopResult);
    await noteReaped(deps, report, run.id, run, found, result, pendingIds.has(run.id));
  }
  const reaping = new Set(orphanRuns.map((r) => r.id));
  for (const run of partial.filter((r) => !pendingIds.has(r.id) && !reaping.has(r.id)))
    await verifyPartialAgain(deps, report, run);
  for (const job of [...pending.jobs, ...orphanJobs]) {
    if (!(await claimReap(deps, job.id))) continue;
    const { found, result } = await stopHere(deps, job, null);
    await deps.db.job.update({
      where: { id: job.id },
      data: { stopResult: { ...result, host: deps.hostId, previous: job.stopResult } as object },
    });
    await noteReaped(deps, report, job.ownerRunId, job, found, result, pendingIds.has(job.id));
  }
  return report;
}

/**
 * A claim older than this is a worker's that died mid-reap (a verified stop takes the stop grace
 * period plus seconds), and what it left is reaped again; until then, once per run or job.
 */
const REAP_CLAIM_LEASE_MS = 5 * 60_000;

const claimant = (deps: Deps) => `${deps.hostId}/${process.pid}`;

/** True for the one worker that may reap this run or job now. */
async function claimReap(deps: Deps, workId: string): Promise<boolean> {
  const claimedBy = claimant(deps);
  const claimed = await deps.db.$queryRaw<{ workId: string }[]>`
    INSERT INTO "ReapClaim" ("workId", "hostId", "claimedBy") VALUES (${workId}::uuid, ${deps.hostId}, ${claimedBy})
    ON CONFLICT ("workId") DO UPDATE SET "claimedBy" = EXCLUDED."claimedBy", "claimedAt" = CURRENT_TIMESTAMP
      WHERE "ReapClaim"."claimedAt" < CURRENT_TIMESTAMP - make_interval(secs => ${REAP_CLAIM_LEASE_MS / 1000}::float8)
    RETURNING "workId"`;
  return claimed.length === 1;
}

/**
 * A settled run whose last verified stop left survivors: verified again (killing what is still
 * its own), recorded only once nothing survives, so a survivor that stays changes nothing until it
 * is gone. By owner token only: once its group is gone, the group id may belong to someone else.
 * The claim is returned afterwards: the next sweep looks again.
 */
async function verifyPartialAgain(deps: Deps, report: ReapReport, run: Candidate & { workdir: string | null }) {
  if (!(await claimReap(deps, run.id))) return;
  try {
    const byToken = { ...run, processGroupId: null };
    const { found, result } = await stopHere(deps, byToken, runFiles(run.id, run.workdir).writerLock);
    if (result.verdict !== 'terminal-clean') return;
    await recordStopResult(deps, run.id, { ...result, host: deps.hostId, previous: run.stopResult } as StopResult);
    report.verified.push(run.id);
    await noteReaped(deps, report, run.id, run, found, result, false);
  } finally {
    await deps.db.reapClaim.deleteMany({ where: { workId: run.id, claimedBy: claimant(deps) } });
  }
}

/** The verified stop, and what was alive before it. */
async function stopHere(
  deps: Deps,
  owner: Candidate,
  writerLock: string | null,
): Promise<{ found: number[]; result: StopResult }> {
  const found = ownedProcesses(owner).map((p) => p.pid);
  const result = await verifiedStop(
    owner,
    owner.ownerToken ? writerLock : null,
    deps.config.TREEWARDEN_STOP_GRACE_MS,
    () => undefined,
  );
  if (result.verdict === 'terminal-clean') removeCgroup(owner.cgroupPath);
  return { found, result };
}

async function noteReaped(
  deps: Deps,
  report: ReapReport,
  runId: string,
  work: Candidate,
  found: number[],
  result: StopResult,
  wasPending: boolean,
) {
  if (wasPending) report.verified.push(work.id);
  if (found.length === 0) return;
  report.reaped.push(work.id);
  deps.log.warn(
    { runId, workId: work.id, host: deps.hostId, processes: found.length, verdict: result.verdict },
    'reaped the live processes of finished work',
  );
  await emitFinding(deps, runId, 'orphan-reaped', {
    host: deps.hostId,
    ...(work.id !== runId ? { jobId: work.id } : {}),
    processes: found,
    verdict: result.verdict,
  });
}
