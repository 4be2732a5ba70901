import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { isHoldNotActive, type PauseApplied, type ReleaseArgs, type ResumeReport } from '../domain/hold-contract';
import { resumeRetryDelayMs } from '../domain/retention';
import { StateKey } from '../domain/search-attributes';
import { TASK_PRIORITY } from '../domain/task-priority';
import { claimWithinCompanyCap } from './company-cap';
import {
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
  awaitPauseAppliedUpdate,
  holdStateQuery,
  releaseHoldUpdate,
  type HoldWorkflowState,
} from './definitions';
import { TreeHoldEntity } from './tree-hold-entity';

// Pause and release fan out over up to thousands of members; both are idempotent, so they
// retry until done, and a dead worker's fan-out moves elsewhere after one heartbeat timeout.
// Release's loser error (HoldNotActive) is non-retryable by construction.
const holdActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });

// A release's claim of a fan-out slot and its freeing are one short transaction each, safe to repeat: retried until
// the database answers (a release given up here would leave the hold active, or its slot taken for half an hour).
// Local: they take no activity slot, which the release's own resumed agents may all hold by the time it frees its
// fan-out slot (the release's answer would wait for one of them to end).
const fanOutSlots = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/** Releases whose workflow took its update before the cap on release fan-outs existed fan out at once, as they did. */
export const RELEASE_FAN_OUT_CAP_PATCH = 'company-release-fan-out-cap';

/** For executions started before their input carried `TREEWARDEN_HOLD_RESUME_RETRIES`. */
const DEFAULT_MAXIMUM_RESUME_RETRIES = 20;
/** The failure type of a hold whose owed resumes could not be dispatched within its retries. */
export const RESUME_RETRIES_EXHAUSTED = 'ResumeRetriesExhausted';

export interface TreeHoldInput {
  holdId: string;
  /** the hold's company, so a release's claim of a fan-out slot need not read the hold (absent in older starts) */
  companyId?: string;
  heartbeatTimeoutMs?: number;
  maximumResumeRetries?: number;
  /** a run continued as new: the released state of the run before it, still retrying resumes */
  continued?: HoldWorkflowState;
}

/**
 * `tree-hold:<holdId>`: applies the pause, then waits for exactly one release (a Workflow Update,
 * so the caller gets the outcome or the 409 synchronously), retries the resumes whose wakes failed
 * a bounded number of times, and completes. Its state is a TreeHoldEntity (tree-hold-entity.ts).
 */
export async function treeHoldWorkflow(input: TreeHoldInput): Promise<HoldWorkflowState> {
  const { holdId, heartbeatTimeoutMs, continued } = input;
  const { applyPause, releaseHold } = holdActivities(heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS);
  const hold = new TreeHoldEntity(continued ?? TreeHoldEntity.initialState(holdId));

  /** The release update's work: once the pause is applied, fan out within a slot of the company's cap. */
  const release = async (args: ReleaseArgs): Promise<ResumeReport> => {
    hold.releaseAccepted(args);
    await condition(() => hold.isApplied);
    const report = await withFanOutSlot(input, () => {
      setCurrentDetails(hold.releasingDetails(args));
      const summary = 'Release the hold: re-dispatch the interrupted work once';
      return releaseHold.executeWithOptions({ summary }, [holdId, args]).catch((error: unknown) => {
        if (!(error instanceof ActivityFailure && isHoldNotActive(error.cause))) throw error;
        if (patched('complete-when-released-outside')) hold.releasedOutside();
        throw error.cause; // the database's refusal reaches the caller in the validator's shape
      });
    });
    hold.released(report);
    return report;
  };
  const pauseApplied = async (): Promise<PauseApplied> => {
    await condition(() => hold.isApplied);
    return hold.state.applied!;
  };
  setHandler(holdStateQuery, () => hold.state);
  setHandler(awaitPauseAppliedUpdate, pauseApplied);
  setHandler(releaseHoldUpdate, release, { validator: (args) => hold.validateRelease(args) });

  if (!continued) {
    setCurrentDetails('applying the pause to the subtree');
    // a pause is a stop: ahead of new runs (TASK_PRIORITY); the release fans out at the hold's own priority
    const pause = { summary: 'Pause the subtree and stop its runs', priority: { priorityKey: TASK_PRIORITY.stop } };
    hold.pauseApplied(await applyPause.executeWithOptions(pause, [holdId]));
    upsertSearchAttributes([{ key: StateKey, value: 'active' }]);
    if (!hold.state.releasing) setCurrentDetails(hold.activeDetails());
    await condition(() => hold.isSettled);
    upsertSearchAttributes([{ key: StateKey, value: 'released' }]);
    setCurrentDetails(hold.releasedDetails());
    // a failed resume wake returned its claim: the obligation is retried here until it is dispatched
    if (!hold.state.releasedOutside) hold.owesRetries(patched('retry-failed-resume-wakes'));
  }
  if (hold.owesResumes) await retryFailedResumes(input, hold);
  await condition(allHandlersFinished);
  return hold.state;
}

/**
 * Retries the release's resumes whose wakes failed, with backoff, at most `maximumResumeRetries`
 * times; continues as new when the history grows long. Executions that entered this loop before
 * 'bounded-resume-retries' retry without a bound, as they did.
 */
async function retryFailedResumes(input: TreeHoldInput, hold: TreeHoldEntity): Promise<void> {
  const { retryOwedResumes } = holdActivities(input.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS);
  const maximumRetries = input.maximumResumeRetries ?? DEFAULT_MAXIMUM_RESUME_RETRIES;
  const bounded = patched('bounded-resume-retries');
  while (hold.owesResumes) {
    if (bounded && hold.retriesExhausted(maximumRetries)) {
      upsertSearchAttributes([{ key: StateKey, value: 'resume_retries_exhausted' }]);
      const message = hold.exhaustedMessage();
      setCurrentDetails(`released: ${message}; their claims are free for a later release or a resolved blocker`);
      throw ApplicationFailure.nonRetryable(message, RESUME_RETRIES_EXHAUSTED);
    }
    if (bounded && workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof treeHoldWorkflow>({ ...input, continued: hold.state });
    }
    await sleep(resumeRetryDelayMs(hold.state.resumeRetries));
    const summary = 'Retry resumes whose wakes failed';
    const retried = await retryOwedResumes.executeWithOptions({ summary }, [input.holdId]);
    hold.retried(retried);
    setCurrentDetails(hold.retriedDetails(retried));
  }
}

/** Fans out within one of the company's release fan-out slots (TREEWARDEN_COMPANY_MAX_RELEASE_FAN_OUTS). */
async function withFanOutSlot<T>({ holdId, companyId }: TreeHoldInput, fanOut: () => Promise<T>): Promise<T> {
  if (!patched(RELEASE_FAN_OUT_CAP_PATCH)) return fanOut();
  const summary = { summary: "Claim a release fan-out slot within the company's cap" };
  const { waits } = await claimWithinCompanyCap(
    () => fanOutSlots.claimReleaseFanOut.executeWithOptions(summary, [holdId, companyId]),
    (c) =>
      c.kind === 'company_at_cap'
        ? `releasing: waiting for the company's cap on release fan-outs (${c.fanningOut} of ${c.cap} fanning out)`
        : undefined,
  );
  if (waits > 0) upsertSearchAttributes([{ key: StateKey, value: 'active' }]);
  try {
    return await fanOut();
  } finally {
    await fanOutSlots.finishReleaseFanOut.executeWithOptions({ summary: 'Free the fan-out slot' }, [holdId]);
  }
}
