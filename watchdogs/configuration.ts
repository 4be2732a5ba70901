/** Task watchdog configuration: set, replace and remove an issue's watchdog, and read the active ones. */
import type { Tx } from '../db/prisma';
import { isUniqueViolation } from '../db/prisma';
import type { Actor } from '../domain/actor';
import { AppError } from '../domain/errors';
import { isInvokable, TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import { normalizeInstructions, type WatchdogMode } from '../domain/watchdog';
import { DEFAULT_REPEAT_LIMIT } from '../domain/watchdog-recheck';
import { logActivity } from '../db/activity-log';
import type { Deps } from '../runtime/deps';
import { recordSubtreeChange } from '../changes/record';

export interface WatchdogInput {
  agentId: string;
  instructions?: string | null;
  /** omitted: `review` for a new watchdog, the current mode for an existing one (a form that does not show it) */
  mode?: WatchdogMode;
  /** re-checks of one reviewed stop before escalating; omitted like `mode`: the default for a new one, else kept */
  repeatLimit?: number;
}

/** Validates the agent for a watchdog: same company, invokable. Throws the documented refusals. */
export async function assertWatchdogAgent(tx: Tx, companyId: string, agentId: string) {
  const agent = await tx.agent.findUnique({ where: { id: agentId } });
  if (!agent || agent.companyId !== companyId) throw new AppError('not_found', 'agent not found');
  if (!isInvokable(agent.status))
    throw new AppError('conflict', 'Cannot assign watchdog to an agent that is not invokable');
  return agent;
}

export function assertWatchable(issue: { originKind: string }) {
  if (issue.originKind === TASK_WATCHDOG_ORIGIN) {
    throw new AppError(
      'unprocessable',
      'A task_watchdog review issue cannot itself be watched; watch the issue it reviews instead',
    );
  }
}

/** Upsert inside the caller's transaction. The unique active key settles racing first PUTs. */
export async function upsertWatchdog(
  tx: Tx,
  issue: { id: string; companyId: string; originKind: string },
  input: WatchdogInput,
  actor: Actor,
) {
  assertWatchable(issue);
  await assertWatchdogAgent(tx, issue.companyId, input.agentId);
  const instructions = normalizeInstructions(input.instructions);
  const existing = await tx.watchdog.findUnique({ where: { activeIssueId: issue.id } });
  const mode = input.mode ?? existing?.mode ?? 'review';
  const repeatLimit = input.repeatLimit ?? existing?.repeatLimit ?? DEFAULT_REPEAT_LIMIT;
  if (existing) {
    const changed =
      existing.agentId !== input.agentId ||
      existing.instructions !== instructions ||
      existing.mode !== mode ||
      existing.repeatLimit !== repeatLimit;
    const updated = changed
      ? await tx.watchdog.update({
          where: { id: existing.id },
          data: { agentId: input.agentId, instructions, mode, repeatLimit, revision: { increment: 1 } },
        })
      : existing;
    if (changed) {
      await logActivity(tx, {
        companyId: issue.companyId,
        actor,
        action: 'issue.watchdog_updated',
        entityType: 'issue',
        entityId: issue.id,
        details: { watchdogId: existing.id, agentId: input.agentId, mode, repeatLimit, revision: updated.revision },
      });
      // the configuration is a fingerprint input
      await recordSubtreeChange(tx, [issue.id], 'watchdog_updated');
    }
    return { watchdog: updated, created: false };
  }
  // a re-added watchdog adopts the previous row's review task, so it is never duplicated
  const previous = await tx.watchdog.findFirst({
    where: { issueId: issue.id, reviewIssueId: { not: null } },
    orderBy: { createdAt: 'desc' },
  });
  if (previous) await tx.watchdog.update({ where: { id: previous.id }, data: { reviewIssueId: null } });
  const watchdog = await tx.watchdog.create({
    data: {
      companyId: issue.companyId,
      issueId: issue.id,
      activeIssueId: issue.id,
      agentId: input.agentId,
      instructions,
      mode,
      repeatLimit,
      reviewIssueId: previous?.reviewIssueId ?? null,
    },
  });
  await logActivity(tx, {
    companyId: issue.companyId,
    actor,
    action: 'issue.watchdog_created',
    entityType: 'issue',
    entityId: issue.id,
    details: { watchdogId: watchdog.id, agentId: input.agentId, mode, repeatLimit },
  });
  // the change starts the new watchdog's workflow (signal-with-start), which evaluates at once
  await recordSubtreeChange(tx, [issue.id], 'watchdog_created');
  return { watchdog, created: true };
}

/** PUT with retry: two racing first PUTs both try to insert; the loser retries as an update. */
export async function putWatchdog(
  deps: Deps,
  issue: { id: string; companyId: string; originKind: string },
  input: WatchdogInput,
  actor: Actor,
) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await deps.db.$transaction((tx) => upsertWatchdog(tx, issue, input, actor));
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= 3) throw error;
    }
  }
}

export async function removeWatchdog(deps: Deps, issue: { id: string; companyId: string }, actor: Actor) {
  return deps.db.$transaction(async (tx) => {
    const existing = await tx.watchdog.findUnique({ where: { activeIssueId: issue.id } });
    if (!existing) return null;
    const removed = await tx.watchdog.update({
      where: { id: existing.id },
      data: { status: 'disabled', activeIssueId: null },
    });
    await logActivity(tx, {
      companyId: issue.companyId,
      actor,
      action: 'issue.watchdog_removed',
      entityType: 'issue',
      entityId: issue.id,
      details: { watchdogId: existing.id },
    });
    return removed;
  });
}

/** Every active watchdog, for recovery on worker start. */
export async function activeWatchdogs(deps: Deps) {
  return deps.db.watchdog.findMany({ where: { status: 'active' }, include: { issue: { select: { title: true } } } });
}

/** The issue's active watchdog, or null. */
export async function activeWatchdogOf(deps: Deps, issue: { id: string }) {
  return deps.db.watchdog.findUnique({ where: { activeIssueId: issue.id } });
}
