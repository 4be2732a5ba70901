/** Every side effect the workflows perform, built from injected dependencies. */
import { ApplicationFailure } from '@temporalio/activity';
import type { Deps } from '../services/deps';
import { applyPause, HoldNotActiveError, releaseHold, retryOwedResumes } from '../services/holds';
import { beginRun, finishRun, type RunOutcome } from '../services/runs';
import { evaluateWatchdog } from '../services/watchdogs';
import { finishJob } from '../services/jobs';
import { resumeAfterResolution } from '../services/execution-blockers';
import { hostOf, recordNothingStarted, recordStopPending, type StopTarget } from '../services/host-stops';
import { withHeartbeat } from './heartbeat';
import { probeHost, type HostProbeRequest } from './host-probe';
import { executeJob, stopJobProcesses } from './job-runner';
import { executeRun, stopProcessGroup } from './run-adapter';
import { deliverWebhook, markWebhookDeliveryDead } from './webhook-delivery';

export interface PauseApplied {
  holdId: string;
  memberCount: number;
  interruptedRunIds: string[];
}

export interface HoldReleaseOutcome {
  holdId: string;
  resumed: { issueId: string; runId: string }[];
  skipped: { issueId: string; reason: string }[];
  wakeFailures: { issueId: string; message: string }[];
}

/** The failure type the API maps to 409 when a release loses. */
export const HOLD_NOT_ACTIVE = 'HoldNotActive';

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
    recordStopPending: (target: StopTarget, id: string, hostId: string, reason: string) => recordStopPending(deps, target, id, hostId, reason),
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
    async releaseHold(holdId: string, releaseId: string, wakeAgents: boolean, actor: string): Promise<HoldReleaseOutcome> {
      try {
        const { resumed, skipped, wakeFailures } = await withHeartbeat(() => releaseHold(deps, holdId, releaseId, wakeAgents, actorFromLabel(actor)));
        return { holdId, resumed, skipped, wakeFailures };
      } catch (error) {
        if (error instanceof HoldNotActiveError) throw ApplicationFailure.nonRetryable(error.message, HOLD_NOT_ACTIVE);
        throw error;
      }
    },
    retryOwedResumes: (holdId: string) => withHeartbeat(() => retryOwedResumes(deps, holdId)),
    resumeAfterResolution: (blockerId: string) => withHeartbeat(() => resumeAfterResolution(deps, blockerId)),
    // heartbeats through the DNS lookup and the POST: a dead worker's attempt moves on within one timeout
    deliverWebhook: (deliveryId: string) => withHeartbeat(() => deliverWebhook(deps, deliveryId)),
    markWebhookDeliveryDead: (deliveryId: string, reason: string) => markWebhookDeliveryDead(deps, deliveryId, reason),
  };
}

export type Activities = ReturnType<typeof createActivities>;

function actorFromLabel(label: string) {
  const [kind, companyId] = label.split(':');
  return kind === 'board' ? { kind: 'board' as const, companyId } : { kind: 'system' as const, companyId };
}
