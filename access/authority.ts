/**
 * Applies domain/authorization.ts to a request: reads where the target sits relative to a run
 * token's own work, then refuses (403, or 404 across companies) before anything is written. Also
 * the watchdog contract's finer rules (seed 000, "Authority contract") on status moves.
 */
import { Prisma, type Tx } from '../db/prisma';
import type { Actor, ScopedActor, WatchdogScope } from '../domain/actor';
import { authorize, type Action, type Reach } from '../domain/authorization';
import { AppError, notFound } from '../domain/errors';
import { TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import { treeWalk } from '../tree/walk';

export type WatchdogActor = Extract<Actor, { kind: 'run' }> & { watchdog: WatchdogScope };

export const isWatchdogActor = (actor: Actor): actor is WatchdogActor =>
  actor.kind === 'run' && actor.watchdog !== null;

export function deny(rule: string): never {
  throw new AppError('forbidden', `watchdog authority: ${rule}`);
}

/** Throws the refusal of domain/authorization.ts, if any. */
export function permit(actor: Actor, action: Action, target: { companyId: string | null; reach?: Reach }): void {
  const decision = authorize(actor, action, { companyId: target.companyId, reach: target.reach ?? 'outside' });
  if (!decision.allowed)
    throw new AppError(decision.code, decision.reason, 'details' in decision ? decision.details : undefined);
}

/** An issue of the actor's company, or 404 (never leak another company's ids). */
export async function issueInCompany(tx: Tx, actor: ScopedActor, issueId: string) {
  const issue = await tx.issue.findUnique({ where: { id: issueId }, include: { blockedBy: true } });
  if (!issue || issue.companyId !== actor.companyId) throw notFound('issue');
  return issue;
}

/** An action on an issue (null: a new root issue); returns the issue's reach (read only for run tokens). */
export async function permitOnIssue(
  tx: Tx,
  actor: Actor,
  action: Action,
  issue: { id: string; companyId: string } | null,
  companyId: string,
): Promise<Reach> {
  const reach = actor.kind === 'run' && issue ? await issueReach(tx, actor, issue.id) : 'outside';
  permit(actor, action, { companyId: issue?.companyId ?? companyId, reach });
  return reach;
}

/** An action on a run (or on a job or monitor, through its owner run). */
export function permitOnRun(actor: Actor, action: Action, run: { id: string; companyId: string }) {
  permit(actor, action, {
    companyId: run.companyId,
    reach: actor.kind === 'run' && actor.runId === run.id ? 'own' : 'outside',
  });
}

/**
 * Where an issue sits for a run token: its own issue (a watchdog run's is its review task), in
 * scope (below its issue; for a watchdog run, in the watched subtree), or outside. Branches
 * created by a task watchdog (review tasks) are never in scope of the issue above them.
 */
export async function issueReach(tx: Tx, actor: Extract<Actor, { kind: 'run' }>, issueId: string): Promise<Reach> {
  if (actor.watchdog) {
    if (issueId === actor.watchdog.reviewIssueId) return 'own';
    return (await below(tx, actor.watchdog.watchedIssueId, issueId)) ? 'scope' : 'outside';
  }
  if (issueId === actor.issueId) return 'own';
  return (await below(tx, actor.issueId, issueId)) ? 'scope' : 'outside';
}

/** True when the issue is the root or a descendant of it, not under a task_watchdog branch. */
async function below(tx: Tx, rootId: string, issueId: string): Promise<boolean> {
  const path = await tx.$queryRaw<{ id: string; originKind: string }[]>`
    WITH RECURSIVE ${treeWalk({
      name: 'up',
      direction: 'up',
      from: Prisma.sql`FROM "Issue" i WHERE i.id = ${issueId}::uuid`,
      columns: ['originKind'],
      stopAfter: Prisma.sql`w.id = ${rootId}::uuid`,
    })}
    SELECT id::text, "originKind" FROM up ORDER BY depth`;
  const rootIndex = path.findIndex((p) => p.id === rootId);
  return rootIndex !== -1 && !path.slice(0, rootIndex).some((p) => p.originKind === TASK_WATCHDOG_ORIGIN);
}

const WATCHDOG_MOVABLE = ['todo', 'in_progress', 'in_review', 'blocked'];
const REVIEW_DISPOSITIONS = ['todo', 'in_progress', 'done', 'in_review', 'blocked'];

/** Status moves a watchdog run may make. Reopening a done/cancelled issue needs a comment. */
export function checkWatchdogStatusMove(reach: Reach, from: string, to: string, hasComment: boolean) {
  if (reach === 'own') {
    if (!REVIEW_DISPOSITIONS.includes(to)) deny(`the review task may only move to ${REVIEW_DISPOSITIONS.join(', ')}`);
    return;
  }
  if (!WATCHDOG_MOVABLE.includes(to)) deny(`included issues may only move among ${WATCHDOG_MOVABLE.join(', ')}`);
  if ((from === 'done' || from === 'cancelled') && !hasComment)
    deny('reopening a done or cancelled issue requires a comment explaining why');
}
