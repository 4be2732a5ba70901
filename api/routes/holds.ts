/** Tree holds: pause a subtree, list and read holds, release them (exactly one release wins). */
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError, WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HOLD_NOT_ACTIVE, type HoldReleaseOutcome } from '../../activities';
import { AppError, notFound } from '../../domain/errors';
import { safeString } from '../../domain/safe-input';
import { permit } from '../../services/authority';
import type { Deps } from '../../services/deps';
import { activeHoldsInside, assertReconciled, createHold, getHoldWithMembers } from '../../services/holds';
import { issueInCompany } from '../../services/issues';
import type { ZodTypeProvider } from '../openapi';
import { answers, list, ReleaseTreeHoldResult, ResumeTreeResult, TreeHold, TreeHoldWithMembers } from '../schemas';
import { companyActor, idParams } from '../validation';

/**
 * True when a failure of `type` is in the cause chain: the validator's rejection is the update's
 * direct cause, the release activity's arrives wrapped in an ActivityFailure.
 */
function causedBy(error: Error, type: string): boolean {
  for (let cause: unknown = error.cause; cause instanceof Error; cause = cause.cause) {
    if ((cause as { type?: string }).type === type) return true;
  }
  return false;
}

const treeHoldBody = z.object({ mode: z.enum(['pause', 'resume']), reason: safeString().trim().max(2000).optional(), wakeAgents: z.boolean().optional() }).strict();
const releaseBody = z.object({ wakeAgents: z.boolean().optional() }).strict();

export function registerHoldRoutes(app: FastifyInstance, deps: Deps) {
  const db = deps.db;
  const api = app.withTypeProvider<ZodTypeProvider>();

  const release = async (companyId: string, holdId: string, wakeAgents: boolean): Promise<HoldReleaseOutcome> => {
    try {
      return await deps.orchestrator.releaseHold({ holdId, releaseId: randomUUID(), wakeAgents, actor: `board:${companyId}` });
    } catch (error) {
      const notActive =
        (error instanceof WorkflowUpdateFailedError && causedBy(error, HOLD_NOT_ACTIVE)) ||
        error instanceof WorkflowNotFoundError ||
        (await db.treeHold.findUnique({ where: { id: holdId } }))?.status === 'released';
      if (notActive) throw new AppError('conflict', `tree hold ${holdId} is not active`);
      throw error;
    }
  };

  api.post('/api/issues/:id/tree-holds', {
    schema: {
      summary: 'Pause a subtree (a new hold), or resume it (release every hold inside)',
      params: idParams('id'),
      body: treeHoldBody,
      response: answers({ 200: ResumeTreeResult, 201: TreeHoldWithMembers }),
    },
  }, async (request, reply) => {
    const { id } = request.params;
    const actor = companyActor(request.actor);
    permit(actor, 'hold.manage', { companyId: actor.companyId });
    const body = request.body;
    const issue = await issueInCompany(db, actor, id);
    if (body.mode === 'pause') {
      const hold = await createHold(deps, id, body.reason ?? null, actor);
      await deps.orchestrator.startHold({ holdId: hold.id, companyId: actor.companyId, rootIssueId: id, title: issue.title });
      return reply.status(201).send(await getHoldWithMembers(deps, hold.id));
    }
    const holds = await activeHoldsInside(deps, id);
    if (body.wakeAgents) for (const hold of holds) await assertReconciled(deps, hold.rootIssueId);
    const merged: Omit<HoldReleaseOutcome, 'holdId'> & { holds: unknown[] } = { holds: [], resumed: [], skipped: [], wakeFailures: [] };
    for (const hold of holds) {
      const outcome = await release(actor.companyId, hold.id, body.wakeAgents ?? false).catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'conflict') return null; // released concurrently
        throw error;
      });
      if (!outcome) continue;
      merged.holds.push(await getHoldWithMembers(deps, hold.id));
      merged.resumed.push(...outcome.resumed);
      merged.skipped.push(...outcome.skipped);
      merged.wakeFailures.push(...outcome.wakeFailures);
    }
    return reply.status(200).send(merged);
  });

  api.get('/api/issues/:id/tree-holds', {
    schema: {
      summary: 'List the holds rooted at an issue',
      params: idParams('id'),
      response: answers({ 200: list(TreeHold) }),
    },
  }, async (request) => {
    const { id } = request.params;
    const actor = companyActor(request.actor);
    permit(actor, 'hold.manage', { companyId: actor.companyId });
    await issueInCompany(db, actor, id);
    const holds = await db.treeHold.findMany({ where: { rootIssueId: id }, orderBy: { createdAt: 'asc' } });
    return { items: holds };
  });

  api.get('/api/tree-holds/:holdId', {
    schema: {
      summary: 'Read a hold with its members',
      params: idParams('holdId'),
      response: answers({ 200: TreeHoldWithMembers }),
    },
  }, async (request) => {
    const { holdId } = request.params;
    const actor = companyActor(request.actor);
    permit(actor, 'hold.manage', { companyId: actor.companyId });
    const hold = await db.treeHold.findUnique({ where: { id: holdId } });
    if (!hold || hold.companyId !== actor.companyId) throw notFound('tree hold');
    return getHoldWithMembers(deps, holdId);
  });

  api.post('/api/issues/:id/tree-holds/:holdId/release', {
    schema: {
      summary: 'Release one hold (409 when not active, or reconciliation_required)',
      params: idParams('id', 'holdId'),
      body: releaseBody,
      response: answers({ 200: ReleaseTreeHoldResult }),
    },
  }, async (request) => {
    const { id, holdId } = request.params;
    const actor = companyActor(request.actor);
    permit(actor, 'hold.manage', { companyId: actor.companyId });
    const body = request.body;
    const hold = await db.treeHold.findUnique({ where: { id: holdId } });
    if (!hold || hold.companyId !== actor.companyId || hold.rootIssueId !== id) throw notFound('tree hold');
    if (hold.status !== 'active') throw new AppError('conflict', `tree hold ${holdId} is not active`);
    if (body.wakeAgents) await assertReconciled(deps, hold.rootIssueId);
    const outcome = await release(actor.companyId, holdId, body.wakeAgents ?? false);
    return { hold: await getHoldWithMembers(deps, holdId), resumed: outcome.resumed, skipped: outcome.skipped, wakeFailures: outcome.wakeFailures };
  });
}
