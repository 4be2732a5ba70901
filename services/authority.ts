/**
 * The task-watchdog authority contract (seed 000, "Authority contract"): what a request made
 * with a watchdog run's token may do. Every refusal is a 403 naming the rule, before any write.
 */
import type { Tx } from '../db/prisma';
import type { Actor, WatchdogScope } from '../domain/actor';
import { AppError } from '../domain/errors';
import { TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import { MAX_TREE_DEPTH } from './tree';

export type WatchdogActor = Extract<Actor, { kind: 'run' }> & { watchdog: WatchdogScope };

export const isWatchdogActor = (actor: Actor): actor is WatchdogActor => actor.kind === 'run' && actor.watchdog !== null;

export function deny(rule: string): never {
  throw new AppError('forbidden', `watchdog authority: ${rule}`);
}

/** Board-only operations: watchdog runs and plain runs alike are refused. */
export function requireBoard(actor: Actor, what: string): asserts actor is Extract<Actor, { kind: 'board' }> {
  if (actor.kind === 'board') return;
  if (isWatchdogActor(actor)) deny(`${what} is not allowed for a watchdog run`);
  throw new AppError('forbidden', `${what} requires a board token`);
}

export type Placement = 'included' | 'review_issue' | 'outside';

/**
 * Where an issue sits relative to the watched subtree: inside it (not under a task_watchdog
 * branch), the watchdog's own review task, or outside.
 */
export async function placement(tx: Tx, scope: WatchdogScope, issueId: string): Promise<Placement> {
  if (issueId === scope.reviewIssueId) return 'review_issue';
  const path = await tx.$queryRaw<{ id: string; originKind: string }[]>`
    WITH RECURSIVE up AS (
      SELECT id, "parentId", "originKind", 1 AS depth FROM "Issue" WHERE id = ${issueId}::uuid
      UNION ALL
      SELECT i.id, i."parentId", i."originKind", up.depth + 1 FROM "Issue" i JOIN up ON i.id = up."parentId"
      WHERE up.id <> ${scope.watchedIssueId}::uuid AND up.depth < ${MAX_TREE_DEPTH}
    )
    SELECT id::text, "originKind" FROM up ORDER BY depth`;
  const rootIndex = path.findIndex((p) => p.id === scope.watchedIssueId);
  if (rootIndex === -1) return 'outside';
  return path.slice(0, rootIndex).some((p) => p.originKind === TASK_WATCHDOG_ORIGIN) ? 'outside' : 'included';
}

export async function requireIncluded(tx: Tx, actor: WatchdogActor, issueId: string, action: string, allowReviewIssue = true) {
  const where = await placement(tx, actor.watchdog, issueId);
  if (where === 'included' || (allowReviewIssue && where === 'review_issue')) return where;
  deny(`${action} is only allowed inside the watched subtree of issue ${actor.watchdog.watchedIssueId}`);
}

const WATCHDOG_MOVABLE = ['todo', 'in_progress', 'in_review', 'blocked'];
const REVIEW_DISPOSITIONS = ['todo', 'in_progress', 'done', 'in_review', 'blocked'];

/** Status moves a watchdog run may make. Reopening a done/cancelled issue needs a comment. */
export function checkWatchdogStatusMove(where: Placement, from: string, to: string, hasComment: boolean) {
  if (where === 'review_issue') {
    if (!REVIEW_DISPOSITIONS.includes(to)) deny(`the review task may only move to ${REVIEW_DISPOSITIONS.join(', ')}`);
    return;
  }
  if (!WATCHDOG_MOVABLE.includes(to)) deny(`included issues may only move among ${WATCHDOG_MOVABLE.join(', ')}`);
  if ((from === 'done' || from === 'cancelled') && !hasComment) deny('reopening a done or cancelled issue requires a comment explaining why');
}
