/** Every side effect the workflows perform, built from injected dependencies. */
import type { PauseApplied, ReleaseArgs } from '../domain/hold-contract';
import type { Deps } from '../runtime/deps';
import { applyPause } from '../holds/pause';
import { releaseHold, retryOwedResumes } from '../holds/release';
import { beginRun, finishRun, type RunOutcome } from '../runs/runs';
import { evaluateWatchdog } from '../watchdogs/evaluation';
import { finishJob } from '../runs/jobs';
import { resumeAfterResolution } from '../runs/execution-blockers';
import { hostOf, recordNothingStarted, recordStopPending, type StopTarget } from '../runs/host-stops';
import { withHeartbeat } from './heartbeat';
import type { HostProbeRequest } from '../domain/host-probe';
import { probeHost } from './host-probe';
import { executeJob, stopJobProcesses } from './job-runner';
import { executeRun, stopProcessGroup } from './run-adapter';
import { deliverWebhook, markWebhookDeliveryDead } from './webhook-delivery';

export function createActivities(deps: Deps) {
  return {
    beginRun: (runId: string) => beginRun(deps, runId),
    executeRun: (runId: string) => executeRun(deps, runId),
    finishRun: (runId: string, outcome: RunOutcome) => finishRun(deps, runId, outcome),
    // host-affine: scheduled on the owning host's queue (`<task queue>-host:<hostId>`) only
    stopProcessGroup: (runId: string) => stopProcessGroup(deps, runId),
    stopJobProcesses: (jobId: string) => stopJobProcesses(deps, jobId),
    probeHost: (request: HostProbeRequest) => probeHost(deps, request),

    hostOf: (target: StopTarget, id: string) => hostOf(deps, target, id),
    recordStopPending: (target: StopTarget, id: string, hostId: string, reason: string) =>
      recordStopPending(deps, target, id, hostId, reason),
    recordNothingStarted: (target: StopTarget, id: string) => recordNothingStarted(deps, target, id),

    executeJob: (jobId: string) => executeJob(deps, jobId),
    finishJob: (jobId: string, outcome: Parameters<typeof finishJob>[2]) => finishJob(deps, jobId, outcome),

    evaluateWatchdog: (watchdogId: string) => withHeartbeat(() => evaluateWatchdog(deps, watchdogId)),
    async isWatchdogActive(watchdogId: string): Promise<boolean> {
      const row = await deps.db.watchdog.findUnique({ where: { id: watchdogId }, select: { status: true } });
      return row?.status === 'active';
    },

    async applyPause(holdId: string): Promise<PauseApplied> {
      const hold = await withHeartbeat(() => applyPause(deps, holdId));
      return {
        holdId,
        memberCount: hold.members.length,
        interruptedRunIds: hold.members.flatMap((m) => (m.interruptedRunId ? [m.interruptedRunId] : [])),
      };
    },
    releaseHold: (holdId: string, release: ReleaseArgs) => withHeartbeat(() => releaseHold(deps, holdId, release)),
    retryOwedResumes: (holdId: string) => withHeartbeat(() => retryOwedResumes(deps, holdId)),
    resumeAfterResolution: (blockerId: string) => withHeartbeat(() => resumeAfterResolution(deps, blockerId)),
    // heartbeats through the DNS lookup and the POST: a dead worker's attempt moves on within one timeout
    deliverWebhook: (deliveryId: string) => withHeartbeat(() => deliverWebhook(deps, deliveryId)),
    markWebhookDeliveryDead: (deliveryId: string, reason: string) => markWebhookDeliveryDead(deps, deliveryId, reason),
  };
}

export type Activities = ReturnType<typeof createActivities>;
