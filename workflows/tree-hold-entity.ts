import { holdNotActive, type PauseApplied, type ReleaseArgs, type ResumeReport } from '../domain/hold-contract';
import type { HoldWorkflowState } from './definitions';

/**
 * What a tree hold's workflow knows (carried across continue-as-new): the pause it applied, the one release that won,
 * what that release resumed, and the retries of the resumes whose wakes failed. The handlers and the main loop only
 * record here and read from here; the lines the Temporal UI shows are written here too.
 */
export class TreeHoldEntity {
  constructor(readonly state: HoldWorkflowState) {}

  static initialState(holdId: string): HoldWorkflowState {
    return { holdId, applied: null, releasing: false, released: null, resumeRetries: 0 };
  }

  /** The release update's validator, the one "not active" gate: a retry of the winning release carries on. */
  validateRelease({ releaseId }: Pick<ReleaseArgs, 'releaseId'>): void {
    if (this.state.releasing && releaseId !== this.state.releaseId) throw holdNotActive(this.state.holdId);
  }

  releaseAccepted({ releaseId }: Pick<ReleaseArgs, 'releaseId'>): void {
    this.state.releasing = true;
    this.state.releaseId = releaseId;
  }

  pauseApplied(applied: PauseApplied): void {
    this.state.applied = applied;
  }

  get isApplied(): boolean {
    return this.state.applied !== null;
  }

  released(report: ResumeReport): void {
    this.state.released = report;
  }

  /** The database refused the release: the hold was released or removed outside this workflow. */
  releasedOutside(): void {
    this.state.releasedOutside = true;
  }

  /** Released here or outside: the main loop goes on. */
  get isSettled(): boolean {
    return this.state.released !== null || this.state.releasedOutside === true;
  }

  /** After the release: the resumes whose wakes failed are owed retries (none before `retry-failed-resume-wakes`). */
  owesRetries(retryFailedWakes: boolean): void {
    this.state.pendingWakeFailures = retryFailedWakes ? this.state.released!.wakeFailures.length : 0;
  }

  get owesResumes(): boolean {
    return (this.state.pendingWakeFailures ?? 0) > 0;
  }

  retriesExhausted(maximumRetries: number): boolean {
    return this.state.resumeRetries >= maximumRetries;
  }

  retried(report: ResumeReport): void {
    this.state.resumeRetries += 1;
    this.state.pendingWakeFailures = report.wakeFailures.length;
  }

  releasingDetails(release: Pick<ReleaseArgs, 'wakeAgents' | 'actor'>): string {
    return `releasing (${release.wakeAgents ? 'waking agents' : 'without waking agents'}, by ${release.actor.kind})`;
  }

  activeDetails(): string {
    const { memberCount, interruptedRunIds } = this.state.applied!;
    return `active: ${memberCount} issues paused, ${interruptedRunIds.length} runs interrupted; waiting for a release`;
  }

  releasedDetails(): string {
    if (this.state.releasedOutside)
      return 'released outside this workflow: the database refused its release; nothing resumed here';
    const { resumed, skipped, wakeFailures } = this.state.released!;
    return `released: ${resumed.length} resumed, ${skipped.length} skipped, ${wakeFailures.length} wake failures`;
  }

  exhaustedMessage(): string {
    const { pendingWakeFailures, resumeRetries } = this.state;
    return `${pendingWakeFailures} resume wakes still failing after ${resumeRetries} retries`;
  }

  retriedDetails(report: ResumeReport): string {
    const left = `${this.state.pendingWakeFailures} wake failures left`;
    return `released: ${report.resumed.length} resumed after ${this.state.resumeRetries} retries, ${left}`;
  }
}
