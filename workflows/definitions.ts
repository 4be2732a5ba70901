/** Signal, query and update names shared by the workflows and every caller. */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { EvaluationSummary } from '../domain/watchdog';
import type { PauseApplied, ReleaseArgs, ResumeReport } from '../domain/hold-contract';
import type { MonitorSchedule } from '../domain/issue-monitor';

export interface SubtreeChange {
  watchdogId: string;
  reason: string;
}

export interface WatchdogWorkflowState {
  watchdogId: string;
  issueId: string;
  lastEvaluation: EvaluationSummary | null;
  evaluations: number;
  changesReceived: number;
  pendingChanges: number;
  lastChangeAt: string | null;
  startedAt: string;
  removed: boolean;
  /** a removal signal not yet confirmed against the database; carried across continue-as-new */
  removalRequested: boolean;
  /** safety ticks that found no change since the last evaluation, and so read nothing more */
  unchangedTicks?: number;
}

export const subtreeChangedSignal = defineSignal<[SubtreeChange]>('subtreeChanged');
export const watchdogRemovedSignal = defineSignal<[{ watchdogId: string }]>('watchdogRemoved');
/**
 * A worker start's "is this watchdog's workflow there?" (with signal-with-start): starts a missing
 * workflow, hands a stale one to a newer watchdog, and otherwise changes nothing, so a worker
 * restart does not re-evaluate every watched subtree.
 */
export const watchdogRecoverySignal = defineSignal<[SubtreeChange]>('watchdogRecovery');
export const watchdogStateQuery = defineQuery<WatchdogWorkflowState>('state');
/** A run of the company settled: a run waiting for its company's cap tries its claim again now. */
export const companyCapFreedSignal = defineSignal('companyCapFreed');

export interface HoldWorkflowState {
  holdId: string;
  applied: PauseApplied | null;
  releasing: boolean;
  /** the release that won: a retry of it after a continue-as-new carries on, any other is refused */
  releaseId?: string;
  released: ResumeReport | null;
  /**
   * The database refused the release although the workflow had not released: the hold was released or removed
   * outside it. Nothing is left to resume here, so the workflow completes.
   */
  releasedOutside?: boolean;
  /** retries of resumes whose wakes failed at release */
  resumeRetries: number;
  /** wake failures the last attempt left; 0 once every owed resume is dispatched */
  pendingWakeFailures?: number;
}

export const awaitPauseAppliedUpdate = defineUpdate<PauseApplied>('awaitPauseApplied');
export const releaseHoldUpdate = defineUpdate<ResumeReport, [ReleaseArgs]>('release');
export const holdStateQuery = defineQuery<HoldWorkflowState>('state');

/** An issue monitor set or refreshed: its workflow waits for this schedule (a newer version wins). */
export const issueMonitorSetSignal = defineSignal<[MonitorSchedule]>('issueMonitorSet');
/** An issue monitor cleared at this version: its workflow stops waiting (a newer set wins). */
export const issueMonitorClearedSignal = defineSignal<[{ version: number }]>('issueMonitorCleared');

/** To the liveness watch: a change that can end an issue's last live path was recorded (domain/liveness.ts). */
export const livePathsMayHaveEndedSignal = defineSignal('livePathsMayHaveEnded');

export interface RunWorkflowInput {
  runId: string;
  heartbeatTimeoutMs?: number;
  /** TREEWARDEN_ADOPTION_WINDOW_MS when the run was woken */
  adoptionWindowMs?: number;
}

/** For workflows started before inputs carried the configured heartbeat timeout. */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000;
/** For runs started before inputs carried the configured adoption window (the variable's default). */
export const DEFAULT_ADOPTION_WINDOW_MS = 5 * 60_000;

/**
 * An activity failure with its causes in one line: the top message alone ("Activity task failed")
 * hides why (the worker shut down, a heartbeat timed out, the command failed).
 */
export function failureMessage(error: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = error; e instanceof Error && messages.length < 5; e = e.cause) {
    if (e.message) messages.push(e.message);
  }
  return messages.length > 0 ? messages.join(': ') : String(error);
}
