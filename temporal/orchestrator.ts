/** The service layer's view of Temporal: start, signal and cancel the entity workflows. */
import type { PauseApplied, ReleaseArgs, ResumeReport } from '../domain/hold-contract';
import type { HostProbeAnswer, HostProbeRequest } from '../domain/host-probe';
import type { MonitorSchedule } from '../domain/issue-monitor';

export interface RunStart {
  runId: string;
  companyId: string;
  issueId: string;
  title: string;
}

export interface WatchdogStart {
  watchdogId: string;
  companyId: string;
  issueId: string;
  title: string;
}

export interface HoldStart {
  holdId: string;
  companyId: string;
  rootIssueId: string;
  title: string;
}

export interface IssueMonitorStart {
  issueId: string;
  companyId: string;
  title: string;
  schedule: MonitorSchedule;
}

export interface ReleaseRequest extends ReleaseArgs {
  holdId: string;
}

export interface JobStart {
  jobId: string;
  /** the owner run's host, where the job runs; null when the run started no process */
  hostId: string | null;
  companyId: string;
  issueId: string;
  title: string;
}

export interface BlockerResolutionStart {
  blockerId: string;
  companyId: string;
  issueId: string;
  title: string;
}

export interface WebhookDeliveryStart {
  deliveryId: string;
  companyId: string;
  summary: string;
}

/**
 * Who waits for a company's cap: a queued run (in its workflow, or deferred before its workflow started), or a hold
 * whose release waits to fan out.
 */
export type CompanyCapWaiter = { kind: 'run'; run: RunStart } | { kind: 'hold'; id: string };

export interface Orchestrator {
  startRun(run: RunStart): Promise<void>;
  /**
   * Tells a run waiting for its company's cap on running runs (starting its workflow when it was deferred), or a
   * hold's release waiting for the cap on release fan-outs, to try its claim now (a no-op for a workflow that ended).
   */
  companyCapFreed(waiting: CompanyCapWaiter): Promise<void>;
  cancelRun(runId: string): Promise<void>;
  /** Tell a watchdog its subtree changed; starts its workflow when it is missing. */
  subtreeChanged(watchdog: WatchdogStart, reason: string): Promise<void>;
  watchdogRemoved(issueId: string, watchdogId: string): Promise<void>;
  /** On worker start: starts the watchdog's workflow when missing, without re-evaluating a running one. */
  recoverWatchdog(watchdog: WatchdogStart): Promise<void>;
  /** Tells the issue's monitor workflow its schedule, starting the workflow when it is not running. */
  scheduleIssueMonitor(monitor: IssueMonitorStart): Promise<void>;
  /** Tells the issue's monitor workflow its monitor was cleared at `version` (a no-op when none runs). */
  issueMonitorCleared(issueId: string, version: number): Promise<void>;
  /**
   * Tells the liveness watch a change that can end an issue's last live path was recorded, starting its workflow
   * when it is not running: it makes sure a recovery pass runs when such an issue can first be stalled.
   */
  livePathsMayHaveEnded(): Promise<void>;
  /** Starts the hold's workflow (a no-op when it runs already); its workflow applies the pause by itself. */
  launchHold(hold: HoldStart): Promise<void>;
  /** Starts the hold's workflow when it is missing and returns once the pause is applied. */
  startHold(hold: HoldStart): Promise<PauseApplied>;
  /** Rejects with the `HoldNotActive` failure (`isHoldNotActive`) when the hold is not active. */
  releaseHold(request: ReleaseRequest): Promise<ResumeReport>;
  startJob(job: JobStart): Promise<void>;
  cancelJob(jobId: string): Promise<void>;
  /** Starts the dispatch of the resume a resolved execution blocker owes. */
  startBlockerResolution(resolution: BlockerResolutionStart): Promise<void>;
  /** Starts a delivery's workflow once (a second start of the same delivery is a no-op). */
  startWebhookDelivery(delivery: WebhookDeliveryStart): Promise<void>;
  /** false when the workflow has closed (or never existed) */
  isWorkflowOpen(workflowId: string): Promise<boolean>;
  /**
   * What the owning host sees of these runs and jobs, asked through its host queue; unreachable after
   * `waitForHostMs`.
   */
  probeHost(hostId: string, request: HostProbeRequest): Promise<HostProbeAnswer>;
}
