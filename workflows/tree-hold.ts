import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { holdNotActive, isHoldNotActive } from '../domain/hold-contract';
import { StateKey } from '../domain/search-attributes';
import {
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
  awaitPauseAppliedUpdate,
  holdStateQuery,
  releaseHoldUpdate,
  type HoldWorkflowState,
} from './definitions';

// Pause and release fan out over up to thousands of members; both are idempotent, so they
// retry until done, and a dead worker's fan-out moves elsewhere after one heartbeat timeout.
// Release's loser error (HoldNotActive) is non-retryable by construction.
const holdActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });

/** For executions started before their input carried `TREEWARDEN_HOLD_RESUME_RETRIES`. */
const DEFAULT_MAXIMUM_RESUME_RETRIES = 20;
/** The failure type of a hold whose owed resumes could not be dispatched within its retries. */
export const RESUME_RETRIES_EXHAUSTED = 'ResumeRetriesExhausted';

/** 1 s doubling to 5 minutes: the schedule of the retries of resumes whose wakes failed. */
const resumeRetryDelayMs = (retriesSoFar: number) => Math.min(1_000 * 2 ** retriesSoFar, 300_000);

export interface TreeHoldInput {
  holdId: string;
  heartbeatTimeoutMs?: number;
  maximumResumeRetries?: number;
  /** a run continued as new: the released state of the run before it, still retrying resumes */
  continued?: HoldWorkflowState;
}

/**
 * `tree-hold:<holdId>`: applies the pause, then waits for exactly one release (a Workflow Update,
 * so the caller gets the outcome or the 409 synchronously), retries the resumes whose wakes failed
 * a bounded number of times, and completes.
 */
export async function treeHoldWorkflow(input: TreeHoldInput): Promise<HoldWorkflowState> {
  const { holdId, heartbeatTimeoutMs, continued } = input;
  const { applyPause, releaseHold } = holdActivities(heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS);
  const state: HoldWorkflowState = continued ?? {
    holdId,
    applied: null,
    releasing: false,
    released: null,
    resumeRetries: 0,
  };

  setHandler(holdStateQuery, () => state);
  setHandler(awaitPauseAppliedUpdate, async () => {
    await condition(() => state.applied !== null);
    return state.applied!;
  });
  setHandler(
    releaseHoldUpdate,
    async (release) => {
      state.releasing = true;
      state.releaseId = release.releaseId;
      await condition(() => state.applied !== null);
      const waking = release.wakeAgents ? 'waking agents' : 'without waking agents';
      setCurrentDetails(`releasing (${waking}, by ${release.actor.kind})`);
      const summary = 'Release the hold: re-dispatch the interrupted work once';
      state.released = await releaseHold.executeWithOptions({ summary }, [holdId, release]).catch((error: unknown) => {
        if (!(error instanceof ActivityFailure && isHoldNotActive(error.cause))) throw error;
        if (patched('complete-when-released-outside')) state.releasedOutside = true;
        throw error.cause; // the database's refusal reaches the caller in the validator's shape
      });
      return state.released;
    },
    {
      // the one "not active" gate; a retry of the winning release (after a continue-as-new) carries on
      validator: ({ releaseId }) => {
        if (state.releasing && releaseId !== state.releaseId) throw holdNotActive(holdId);
      },
    },
  );

  if (!continued) {
    setCurrentDetails('applying the pause to the subtree');
    state.applied = await applyPause.executeWithOptions({ summary: 'Pause the subtree and stop its runs' }, [holdId]);
    upsertSearchAttributes([{ key: StateKey, value: 'active' }]);
    const { memberCount, interruptedRunIds } = state.applied;
    const paused = `${memberCount} issues paused, ${interruptedRunIds.length} runs interrupted`;
    if (!state.releasing) setCurrentDetails(`active: ${paused}; waiting for a release`);
    await condition(() => state.released !== null || state.releasedOutside === true);
    upsertSearchAttributes([{ key: StateKey, value: 'released' }]);
    if (state.releasedOutside) {
      setCurrentDetails('released outside this workflow: the database refused its release; nothing resumed here');
      await condition(allHandlersFinished);
      return state;
    }
    const { resumed, skipped, wakeFailures } = state.released!;
    const failures = `${wakeFailures.length} wake failures`;
    setCurrentDetails(`released: ${resumed.length} resumed, ${skipped.length} skipped, ${failures}`);
    // a failed resume wake returned its claim: the obligation is retried here until it is dispatched
    state.pendingWakeFailures = patched('retry-failed-resume-wakes') ? wakeFailures.length : 0;
  }
  if (state.pendingWakeFailures) await retryFailedResumes(input, state);
  await condition(allHandlersFinished);
  return state;
}

/**
 * Retries the release's resumes whose wakes failed, with backoff, at most `maximumResumeRetries`
 * times; continues as new when the history grows long. Executions that entered this loop before
 * 'bounded-resume-retries' retry without a bound, as they did.
 */
async function retryFailedResumes(input: TreeHoldInput, state: HoldWorkflowState): Promise<void> {
  const { retryOwedResumes } = holdActivities(input.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS);
  const maximumRetries = input.maximumResumeRetries ?? DEFAULT_MAXIMUM_RESUME_RETRIES;
  const bounded = patched('bounded-resume-retries');
  while (state.pendingWakeFailures) {
    if (bounded && state.resumeRetries >= maximumRetries) {
      upsertSearchAttributes([{ key: StateKey, value: 'resume_retries_exhausted' }]);
      const message = `${state.pendingWakeFailures} resume wakes still failing after ${state.resumeRetries} retries`;
      setCurrentDetails(`released: ${message}; their claims are free for a later release or a resolved blocker`);
      throw ApplicationFailure.nonRetryable(message, RESUME_RETRIES_EXHAUSTED);
    }
    if (bounded && workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof treeHoldWorkflow>({ ...input, continued: state });
    }
    await sleep(resumeRetryDelayMs(state.resumeRetries));
    const summary = 'Retry resumes whose wakes failed';
    const retried = await retryOwedResumes.executeWithOptions({ summary }, [input.holdId]);
    state.resumeRetries += 1;
    state.pendingWakeFailures = retried.wakeFailures.length;
    const left = `${state.pendingWakeFailures} wake failures left`;
    setCurrentDetails(`released: ${retried.resumed.length} resumed after ${state.resumeRetries} retries, ${left}`);
  }
}
