/**
 * `recheckAfter` on a review task's disposition (issue 29, item 1): the review accepts the stop only until then.
 * Written with the disposition, in its transaction, to the watchdog's `pendingRecheckAfter`; the evaluation that
 * records the disposition moves it to `acceptedUntil` (watchdogs/reviewed-stop.ts).
 */
import { watchdogMayAct } from '../domain/watchdog';
import type { Tx } from '../db/prisma';
import { AppError } from '../domain/errors';
import { TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import { acceptsStop, recheckAfterProblem } from '../domain/watchdog-recheck';

/** The part of a PATCH of an issue that decides its review disposition. */
export interface DispositionInput {
  status?: string;
  assigneeAgentId?: string | null;
  /** ISO-8601 */
  recheckAfter?: string;
}

const refuse = (problem: string): never => {
  throw new AppError('unprocessable', `recheckAfter: ${problem}`);
};

/**
 * A PATCH that states the review task's status states its acceptance: with `recheckAfter` until then, without it
 * for good (a disposition stated again replaces the earlier one). Refused (422, nothing written) anywhere but on the
 * review task of an active watchdog with a pending review, with a disposition that accepts the stop.
 */
export async function stateRecheckAfter(
  tx: Tx,
  issue: { id: string; originKind: string; status: string; assigneeAgentId: string | null },
  input: DispositionInput,
  now: Date,
): Promise<void> {
  const given = input.recheckAfter !== undefined;
  if (!given && input.status === undefined) return;
  if (issue.originKind !== TASK_WATCHDOG_ORIGIN) {
    if (given) refuse("only a watchdog review task's disposition carries it");
    return;
  }
  const watchdog = await tx.watchdog.findUnique({ where: { reviewIssueId: issue.id } });
  if (!watchdogMayAct(watchdog) || !watchdog.pendingReviewFingerprint) {
    if (given) refuse('this review task has no pending review to accept');
    return;
  }
  let recheckAfter: Date | null = null;
  if (given) {
    const status = input.status ?? issue.status;
    const assignee = input.assigneeAgentId !== undefined ? input.assigneeAgentId : issue.assigneeAgentId;
    if (!acceptsStop(status, assignee, watchdog.agentId))
      refuse('only with a disposition that accepts the stop: status done, or in_review handed to another assignee');
    recheckAfter = new Date(input.recheckAfter!);
    const problem = recheckAfterProblem(recheckAfter, now);
    if (problem) throw new AppError('unprocessable', problem);
  }
  if (recheckAfter === null && watchdog.pendingRecheckAfter === null) return;
  await tx.watchdog.update({ where: { id: watchdog.id }, data: { pendingRecheckAfter: recheckAfter } });
}
