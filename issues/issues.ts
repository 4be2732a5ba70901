/** Issues, comments and blockers, with the company boundary and the watchdog contract enforced. */
import type { OnCreated, Tx } from '../db/prisma';
import type { Comment } from '../generated/prisma/client';
import type { Actor, ScopedActor } from '../domain/actor';
import { AppError, notFound } from '../domain/errors';
import { isInvokable, type IssueStatus } from '../domain/statuses';
import { logActivity } from '../db/activity-log';
import {
  checkWatchdogStatusMove,
  deny,
  isWatchdogActor,
  issueInCompany,
  permit,
  permitOnIssue,
} from '../access/authority';
import type { Deps } from '../runtime/deps';
import { recordSubtreeChange } from '../changes/record';
import { activeHoldsCovering } from '../tree/queries';
import { upsertWatchdog, type WatchdogInput } from '../watchdogs/configuration';
import { stateRecheckAfter } from '../watchdogs/recheck-after';
import { blockersOfIssue } from '../runs/execution-blockers';
import { blockedReasonOnCreate, blockedReasonOnUpdate } from './blocked-exits';
import { wakeAndDispatch } from '../dispatch/wakes';
import { insertComment } from './comment-rows';

export function presentIssue(issue: {
  id: string;
  companyId: string;
  parentId: string | null;
  title: string;
  status: string;
  assigneeAgentId: string | null;
  originKind: string;
  originId: string | null;
  blockedReason: string | null;
  createdAt: Date;
  updatedAt: Date;
  blockedBy?: { blockerIssueId: string }[];
}) {
  return {
    id: issue.id,
    companyId: issue.companyId,
    parentId: issue.parentId,
    title: issue.title,
    status: issue.status,
    assigneeAgentId: issue.assigneeAgentId,
    originKind: issue.originKind,
    originId: issue.originId,
    blockedByIssueIds: (issue.blockedBy ?? []).map((b) => b.blockerIssueId).sort(),
    blockedReason: issue.blockedReason,
    createdAt: issue.createdAt,
    updatedAt: issue.updatedAt,
  };
}

async function assertAssignable(tx: Tx, companyId: string, agentId: string) {
  const agent = await tx.agent.findUnique({ where: { id: agentId } });
  if (!agent || agent.companyId !== companyId) throw notFound('agent');
  if (!isInvokable(agent.status))
    throw new AppError('conflict', `agent ${agentId} is ${agent.status} and cannot be assigned`);
}

async function assertBlockersInCompany(tx: Tx, companyId: string, issueId: string, blockerIds: string[]) {
  if (blockerIds.includes(issueId)) throw new AppError('bad_request', 'an issue cannot block itself');
  const found = await tx.issue.count({ where: { id: { in: blockerIds }, companyId } });
  if (found !== new Set(blockerIds).size) throw notFound('blocker issue');
}

export interface CreateIssueInput {
  title: string;
  parentId?: string | null;
  assigneeAgentId?: string | null;
  status?: IssueStatus;
  blockedReason?: string | null;
  watchdog?: WatchdogInput;
}

export async function createIssue(
  deps: Deps,
  actor: ScopedActor,
  input: CreateIssueInput,
  onCreated?: OnCreated<ReturnType<typeof presentIssue>>,
) {
  if (input.watchdog) permit(actor, 'watchdog.manage', { companyId: actor.companyId });
  const issue = await deps.db.$transaction(async (tx) => {
    const parent = input.parentId ? await issueInCompany(tx, actor, input.parentId) : null;
    await permitOnIssue(tx, actor, 'issue.create', parent, actor.companyId);
    if (input.assigneeAgentId) await assertAssignable(tx, actor.companyId, input.assigneeAgentId);
    const status = input.status ?? 'todo';
    const blockedReason = await blockedReasonOnCreate(tx, status, input.blockedReason);
    const created = await tx.issue.create({
      data: {
        companyId: actor.companyId,
        parentId: input.parentId ?? null,
        title: input.title,
        status,
        blockedReason,
        assigneeAgentId: input.assigneeAgentId ?? null,
      },
      include: { blockedBy: true },
    });
    await logActivity(tx, {
      companyId: actor.companyId,
      actor,
      action: 'issue.created',
      entityType: 'issue',
      entityId: created.id,
      details: { parentId: created.parentId, status: created.status },
    });
    if (input.watchdog) await upsertWatchdog(tx, created, input.watchdog, actor);
    // a new issue is a new node (and maybe a new leaf) of every subtree above it
    await recordSubtreeChange(tx, [created.id], 'issue_created');
    await onCreated?.(tx, presentIssue(created));
    return created;
  });
  return presentIssue(issue);
}

export interface UpdateIssueInput {
  title?: string;
  status?: IssueStatus;
  assigneeAgentId?: string | null;
  blockedByIssueIds?: string[];
  blockedReason?: string | null;
  comment?: string;
  /** ISO-8601; on a review task's accepting disposition only (watchdogs/recheck-after.ts) */
  recheckAfter?: string;
}

export async function updateIssue(deps: Deps, actor: ScopedActor, issueId: string, input: UpdateIssueInput) {
  const updated = await deps.db.$transaction(async (tx) => {
    const issue = await issueInCompany(tx, actor, issueId);
    const reach = await permitOnIssue(tx, actor, 'issue.update', issue, actor.companyId);
    // the whole update is refused, status and blockers included, before anything is written
    if (input.comment !== undefined) await refuseBoardMessageUnderHold(tx, actor, issueId);
    if (isWatchdogActor(actor)) {
      if (input.title !== undefined) deny('renaming issues is not part of the watchdog contract');
      if (input.status !== undefined && input.status !== issue.status)
        checkWatchdogStatusMove(reach, issue.status, input.status, Boolean(input.comment?.trim()));
      if (input.assigneeAgentId === null)
        deny('a watchdog run may reassign issues to active agents, not unassign them');
    }
    if (input.assigneeAgentId) await assertAssignable(tx, actor.companyId, input.assigneeAgentId);
    await stateRecheckAfter(tx, issue, input, new Date());
    if (input.blockedByIssueIds) await assertBlockersInCompany(tx, actor.companyId, issueId, input.blockedByIssueIds);
    const blockedReason = await blockedReasonOnUpdate(tx, issue, input);
    if (input.blockedByIssueIds) {
      await tx.issueBlocker.deleteMany({ where: { issueId } });
      await tx.issueBlocker.createMany({
        data: [...new Set(input.blockedByIssueIds)].map((blockerIssueId) => ({ issueId, blockerIssueId })),
      });
    }
    const result = await tx.issue.update({
      where: { id: issueId },
      data: {
        ...(input.title !== undefined ? { title: input.title } : {}),
        ...(input.status !== undefined ? { status: input.status } : {}),
        blockedReason,
        ...(input.assigneeAgentId !== undefined ? { assigneeAgentId: input.assigneeAgentId } : {}),
      },
      include: { blockedBy: true },
    });
    if (input.comment?.trim()) await insertComment(tx, actor, issueId, input.comment.trim());
    const blockersBefore = issue.blockedBy.map((b) => b.blockerIssueId);
    if (materiallyChanged(issue, blockersBefore, input))
      await recordSubtreeChange(tx, [issueId, ...blockersBefore, ...(input.blockedByIssueIds ?? [])], 'issue_updated');
    await logActivity(tx, {
      companyId: actor.companyId,
      actor,
      action: 'issue.updated',
      entityType: 'issue',
      entityId: issueId,
      details: { changes: input, previousStatus: issue.status },
    });
    return result;
  });
  return presentIssue(updated);
}

/**
 * Seed 002's composer rule, for a plain comment and for an update that carries one: while an active
 * tree hold covers the issue (on it or an ancestor), a person's new message is 409 until the hold is
 * released. Runs (interrupted agents) may still report their results.
 */
async function refuseBoardMessageUnderHold(tx: Tx, actor: ScopedActor, issueId: string) {
  if (actor.kind === 'board' && (await activeHoldsCovering(tx, issueId)).length > 0)
    throw new AppError('conflict', 'this issue is paused by a tree hold; resume it before sending new messages');
}

/** A fingerprint input changed (status, assignee, blockers); a title or a comment alone is bookkeeping. */
function materiallyChanged(
  before: { status: string; assigneeAgentId: string | null },
  blockersBefore: string[],
  input: UpdateIssueInput,
): boolean {
  if (input.status !== undefined && input.status !== before.status) return true;
  if (input.assigneeAgentId !== undefined && input.assigneeAgentId !== before.assigneeAgentId) return true;
  if (!input.blockedByIssueIds) return false;
  const after = new Set(input.blockedByIssueIds);
  return after.size !== blockersBefore.length || blockersBefore.some((id) => !after.has(id));
}

export async function addComment(
  deps: Deps,
  actor: ScopedActor,
  issueId: string,
  body: string,
  onCreated?: OnCreated<Comment>,
) {
  const comment = await deps.db.$transaction(async (tx) => {
    await permitOnIssue(tx, actor, 'issue.comment', await issueInCompany(tx, actor, issueId), actor.companyId);
    await refuseBoardMessageUnderHold(tx, actor, issueId);
    const created = await insertComment(tx, actor, issueId, body);
    await logActivity(tx, {
      companyId: actor.companyId,
      actor,
      action: 'issue.comment_added',
      entityType: 'issue',
      entityId: issueId,
      details: { commentId: created.id },
    });
    await onCreated?.(tx, created);
    return created;
  });
  return comment;
}

/** A company's issues, or one parent's children, oldest first. */
export async function listIssues(deps: Deps, companyId: string, parentId?: string) {
  const issues = await deps.db.issue.findMany({
    where: { companyId, ...(parentId ? { parentId } : {}) },
    include: { blockedBy: true },
    orderBy: { createdAt: 'asc' },
  });
  return issues.map(presentIssue);
}

/** An issue with its execution blockers (active and resolved, oldest first). */
export async function issueWithBlockers(deps: Deps, actor: ScopedActor, issueId: string) {
  const issue = await issueInCompany(deps.db, actor, issueId);
  return { ...presentIssue(issue), executionBlockers: await blockersOfIssue(deps.db, issueId) };
}

export interface WakeIssueInput {
  idempotencyKey?: string;
  reason?: string;
  context?: Record<string, unknown>;
}

/** Wakes the issue's assignee; `created` is false when the idempotency key named an existing wake. */
export async function wakeIssue(deps: Deps, actor: ScopedActor, issueId: string, input: WakeIssueInput) {
  const issue = await issueInCompany(deps.db, actor, issueId);
  await permitOnIssue(deps.db, actor, 'issue.wake', issue, actor.companyId);
  if (!issue.assigneeAgentId) throw new AppError('conflict', 'issue has no assignee to wake');
  const idempotencyKey = input.idempotencyKey ? `api:${actor.companyId}:${input.idempotencyKey}` : null;
  const { wake, created, outcome } = await wakeAndDispatch(
    deps,
    {
      companyId: actor.companyId,
      agentId: issue.assigneeAgentId,
      issueId,
      reason: input.reason ?? 'manual_wake',
      context: input.context,
      idempotencyKey,
    },
    actor,
  );
  const holdIds = outcome.kind === 'deferred' ? { holdIds: outcome.holdIds } : {};
  return { created, wake: { id: wake.id, status: wake.status, runId: wake.runId, outcome: outcome.kind, ...holdIds } };
}

/** The titles of the company's issues among `issueIds` (others are left out). */
export async function issueTitles(deps: Deps, companyId: string, issueIds: string[]): Promise<Map<string, string>> {
  const issues = await deps.db.issue.findMany({
    where: { id: { in: issueIds }, companyId },
    select: { id: true, title: true },
  });
  return new Map(issues.map((i) => [i.id, i.title]));
}
