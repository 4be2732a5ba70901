/** Every side effect the workflows perform, built from injected dependencies. */
import { watchdogMayAct } from '../domain/watchdog';
import type { PauseApplied, ReleaseArgs } from '../domain/hold-contract';
import type { Deps } from '../runtime/deps';
import { applyPause } from '../holds/pause';
import { releaseHold, retryOwedResumes } from '../holds/release';
import { claimReleaseFanOut, finishReleaseFanOut } from '../dispatch/release-cap';
import { settleRun, type RunOutcome } from '../runs/runs';
import { beginRun } from '../dispatch/begin';
import { claimRunWithinCompanyCap, offerCompanyCapSlotsOf } from '../dispatch/company-cap';
import { evaluateWatchdog, watchdogChangedSinceEvaluation } from '../watchdogs/evaluation';
import { finishJob } from '../runs/jobs';
import { resumeAfterResolution } from '../runs/execution-blockers';
import { hostOf, recordNothingStarted, recordStopPending, type StopTarget } from '../processes/host-stops';
import { withHeartbeat } from './heartbeat';
import type { HostProbeRequest } from '../domain/host-probe';
import { probeHost } from './host-probe';
import { adoptJob, executeJob, stopJobProcesses } from './job-runner';
import { executeRun, stopProcessGroup } from './run-adapter';
import { adoptRun } from './run-adoption';
import { deliverWebhook, markWebhookDeliveryDead } from './webhook-delivery';
import { runRetentionPass } from '../retention/retention';
import { fireIssueMonitor } from '../monitors/monitors';
import { recoverStalledIssues } from '../liveness/recovery';

export function createActivities(deps: Deps) {
  return {
    beginRun: (runId: string) => beginRun(deps, runId),
    claimRunWithinCompanyCap: (runId: string) => claimRunWithinCompanyCap(deps, runId),
    // heartbeating from its first statement: under load the work before the agent starts (database writes, the
    // capsule) can outlast a heartbeat timeout, and a run timed out then has no agent to adopt
    executeRun: (runId: string) => withHeartbeat(() => executeRun(deps, runId)),
    async finishRun(runId: string, outcome: RunOutcome) {
      const { status, companyId } = await settleRun(deps, runId, outcome);
      await offerCompanyCapSlotsOf(deps, companyId);
      return status;
    },
    // host-affine: scheduled on the owning host's queue (`<task queue>-host:<hostId>`) only
    stopProcessGroup: (runId: string) => stopProcessGroup(deps, runId),
    adoptRun: (runId: string) => adoptRun(deps, runId),
    stopJobProcesses: (jobId: string) => stopJobProcesses(deps, jobId),
    adoptJob: (jobId: string) => adoptJob(deps, jobId),
    probeHost: (request: HostProbeRequest) => probeHost(deps, request),

    hostOf: (target: StopTarget, id: string) => hostOf(deps, target, id),
    recordStopPending: (target: StopTarget, id: string, hostId: string, reason: string) =>
      recordStopPending(deps, target, id, hostId, reason),
    recordNothingStarted: (target: StopTarget, id: string) => recordNothingStarted(deps, target, id),

    executeJob: (jobId: string) => executeJob(deps, jobId),
    finishJob: (jobId: string, outcome: Parameters<typeof finishJob>[2]) => finishJob(deps, jobId, outcome),

    evaluateWatchdog: (watchdogId: string) => withHeartbeat(() => evaluateWatchdog(deps, watchdogId)),
    watchdogChangedSinceEvaluation: (watchdogId: string) => watchdogChangedSinceEvaluation(deps, watchdogId),
    async isWatchdogActive(watchdogId: string): Promise<boolean> {
      const row = await deps.db.watchdog.findUnique({ where: { id: watchdogId }, select: { status: true } });
      return watchdogMayAct(row);
    },

    async applyPause(holdId: string): Promise<PauseApplied> {
      const hold = await withHeartbeat(() => applyPause(deps, holdId));
      return {
        holdId,
        memberCount: hold.members.length,
        interruptedRunIds: hold.members.flatMap((m) => (m.interruptedRunId ? [m.interruptedRunId] : [])),
      };
    },
    claimReleaseFanOut: (holdId: string, companyId?: string) => claimReleaseFanOut(deps, holdId, companyId),
    finishReleaseFanOut: (holdId: string) => finishReleaseFanOut(deps, holdId),
    releaseHold: (holdId: string, release: ReleaseArgs) => withHeartbeat(() => releaseHold(deps, holdId, release)),
    retryOwedResumes: (holdId: string) => withHeartbeat(() => retryOwedResumes(deps, holdId)),
    resumeAfterResolution: (blockerId: string) => withHeartbeat(() => resumeAfterResolution(deps, blockerId)),
    fireIssueMonitor: (issueId: string, version: number) =>
      withHeartbeat(() => fireIssueMonitor(deps, issueId, version)),
    // heartbeats through the DNS lookup and the POST: a dead worker's attempt moves on within one timeout
    deliverWebhook: (deliveryId: string) => withHeartbeat(() => deliverWebhook(deps, deliveryId)),
    markWebhookDeliveryDead: (deliveryId: string, reason: string) => markWebhookDeliveryDead(deps, deliveryId, reason),
    // heartbeats between and during its batches: a dead worker's pass starts over elsewhere within one timeout
    runRetentionPass: () => withHeartbeat(() => runRetentionPass(deps)),
    recoverStalledIssues: () => withHeartbeat(() => recoverStalledIssues(deps)),
  };
}

export type Activities = ReturnType<typeof createActivities>;
