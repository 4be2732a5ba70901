/**
 * The tree-hold workflow's boundary: what a pause reports, what a release takes and gives back,
 * and its one refusal. The service, activity, workflow, orchestrator, route and client share it.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ExecutionBlocker, TreeHold, TreeHoldMember } from '../generated/prisma/client';
import type { Actor } from './actor';
import type { HoldStops, RunStop } from './hold-stops';
import type { ResumeReport } from './resume-report';

export interface PauseApplied {
  holdId: string;
  memberCount: number;
  interruptedRunIds: string[];
}

export type { ResumeReport };

export const emptyReport = (): ResumeReport => ({ resumed: [], skipped: [], wakeFailures: [] });

export interface ReleaseArgs {
  /** the release's dedupe key: the update id, and the tag of the database compare-and-set */
  releaseId: string;
  wakeAgents: boolean;
  /** recorded in the activity log as is */
  actor: Actor;
}

type MemberBlocker = Pick<ExecutionBlocker, 'id' | 'runId' | 'cause' | 'nextAction' | 'createdAt' | 'resolvedAt'> &
  Pick<ExecutionBlocker, 'resolution' | 'note'> & { status: string };

/**
 * A hold with its member snapshot; each member names the execution blocker its interrupted run left, if any,
 * and that run's stop (verified or not); the hold's stop state and survivors sum them up (domain/hold-stops.ts).
 */
export type HoldWithMembers = TreeHold &
  HoldStops & {
    members: (TreeHoldMember & { executionBlocker: MemberBlocker | null; stop: RunStop | null })[];
  };

/**
 * A release's answer to its caller: the workflow's report and the hold as released, read once
 * after it (the members stay out of the workflow's payloads: thousands of them pass 2 MB).
 */
export interface ReleaseOutcome extends ResumeReport {
  hold: HoldWithMembers;
}

/** The failure type of every "this hold is not active" refusal; the API answers it with a 409. */
export const HOLD_NOT_ACTIVE = 'HoldNotActive';

/** Non-retryable: a release that lost stays lost. */
export const holdNotActive = (holdId: string) =>
  ApplicationFailure.nonRetryable(`tree hold ${holdId} is not active`, HOLD_NOT_ACTIVE);

export const isHoldNotActive = (error: unknown): error is ApplicationFailure =>
  error instanceof ApplicationFailure && error.type === HOLD_NOT_ACTIVE;
