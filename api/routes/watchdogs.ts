/** Watchdog configuration and issue interactions (the waiting paths a watchdog must see). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError, notFound } from '../../domain/errors';
import { uuidSchema } from '../../domain/ids';
import { jsonRecord, safeString } from '../../domain/safe-input';
import { logActivity } from '../../services/activity-log';
import { permit, permitOnIssue } from '../../services/authority';
import type { Deps } from '../../services/deps';
import { issueInCompany } from '../../services/issues';
import { notifySubtreeChanged } from '../../services/notify';
import { putWatchdog, removeWatchdog } from '../../services/watchdogs';
import type { ZodTypeProvider } from '../openapi';
import { companyActor, idParams, watchdogBodySchema } from '../validation';

const presentWatchdog = (w: {
  id: string; companyId: string; issueId: string; agentId: string; instructions: string | null; status: string; revision: number;
  reviewIssueId: string | null; lastObservedFingerprint: string | null; lastReviewedFingerprint: string | null; lastEvaluation: unknown;
  triggerCount: number; lastTriggeredAt: Date | null; createdAt: Date; updatedAt: Date;
}) => ({
  id: w.id, companyId: w.companyId, issueId: w.issueId, agentId: w.agentId, instructions: w.instructions, status: w.status, revision: w.revision,
  reviewIssueId: w.reviewIssueId, lastObservedFingerprint: w.lastObservedFingerprint, lastReviewedFingerprint: w.lastReviewedFingerprint,
  lastEvaluation: w.lastEvaluation, triggerCount: w.triggerCount, lastTriggeredAt: w.lastTriggeredAt, createdAt: w.createdAt, updatedAt: w.updatedAt,
});

const presentInteraction = (x: { id: string; issueId: string; kind: string; status: string; audience: string; addresseeAgentId: string | null; createdByKind: string; createdByAgentId: string | null; resolvedByKind: string | null; resolution: unknown; createdAt: Date; resolvedAt: Date | null }) => x;

const interactionBody = z.object({
  kind: safeString().trim().min(1).max(100),
  audience: z.enum(['anyone', 'human_only', 'not_creator']).default('anyone'),
  addresseeAgentId: uuidSchema.nullable().optional(),
}).strict();
const resolveInteractionBody = z.object({ resolution: jsonRecord().optional(), status: z.enum(['resolved', 'cancelled']).default('resolved') }).strict();

export function registerWatchdogRoutes(app: FastifyInstance, deps: Deps) {
  const db = deps.db;
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get('/api/issues/:issueId/watchdog', { schema: { summary: "Read an issue's active watchdog (null when none)", params: idParams('issueId') } }, async (request) => {
    const { issueId } = request.params;
    const actor = companyActor(request.actor);
    permit(actor, 'watchdog.manage', { companyId: actor.companyId });
    await issueInCompany(db, actor, issueId);
    const watchdog = await db.watchdog.findUnique({ where: { activeIssueId: issueId } });
    return watchdog ? presentWatchdog(watchdog) : null;
  });

  api.put('/api/issues/:issueId/watchdog', { schema: { summary: "Set an issue's watchdog (201 created, 200 updated)", params: idParams('issueId'), body: watchdogBodySchema } }, async (request, reply) => {
    const { issueId } = request.params;
    const actor = companyActor(request.actor);
    permit(actor, 'watchdog.manage', { companyId: actor.companyId });
    const body = request.body;
    const issue = await issueInCompany(db, actor, issueId);
    const { watchdog, created } = await putWatchdog(deps, issue, body, actor);
    await notifySubtreeChanged(deps, [issueId], created ? 'watchdog_created' : 'watchdog_updated');
    return reply.status(created ? 201 : 200).send(presentWatchdog(watchdog));
  });

  api.delete('/api/issues/:issueId/watchdog', { schema: { summary: "Remove an issue's watchdog", params: idParams('issueId') } }, async (request, reply) => {
    const { issueId } = request.params;
    const actor = companyActor(request.actor);
    permit(actor, 'watchdog.manage', { companyId: actor.companyId });
    const issue = await issueInCompany(db, actor, issueId);
    const removed = await removeWatchdog(deps, issue, actor);
    if (!removed) throw new AppError('not_found', 'this issue has no active watchdog');
    await deps.orchestrator.watchdogRemoved(issueId, removed.id).catch((error: unknown) => deps.log.warn({ err: error }, 'watchdog removal signal failed; its next evaluation ends it'));
    return reply.status(200).send(presentWatchdog(removed));
  });

  api.post('/api/issues/:id/interactions', { schema: { summary: 'Open an interaction on an issue', params: idParams('id'), body: interactionBody } }, async (request, reply) => {
    const { id } = request.params;
    const actor = companyActor(request.actor);
    const body = request.body;
    const interaction = await db.$transaction(async (tx) => {
      await permitOnIssue(tx, actor, 'interaction.open', await issueInCompany(tx, actor, id), actor.companyId);
      if (body.addresseeAgentId) {
        const agent = await tx.agent.findUnique({ where: { id: body.addresseeAgentId } });
        if (!agent || agent.companyId !== actor.companyId) throw notFound('addressee agent');
      }
      const created = await tx.interaction.create({
        data: { companyId: actor.companyId, issueId: id, kind: body.kind, audience: body.audience, addresseeAgentId: body.addresseeAgentId ?? null, createdByKind: actor.kind, createdByAgentId: actor.kind === 'run' ? actor.agentId : null },
      });
      await logActivity(tx, { companyId: actor.companyId, actor, action: 'issue.interaction_created', entityType: 'issue', entityId: id, details: { interactionId: created.id } });
      return created;
    });
    await notifySubtreeChanged(deps, [id], 'interaction_created');
    return reply.status(201).send(presentInteraction(interaction));
  });

  api.post('/api/interactions/:id/resolve', { schema: { summary: 'Resolve or cancel an interaction', params: idParams('id'), body: resolveInteractionBody } }, async (request) => {
    const { id } = request.params;
    const actor = companyActor(request.actor);
    const body = request.body;
    const interaction = await db.$transaction(async (tx) => {
      const existing = await tx.interaction.findUnique({ where: { id } });
      if (!existing || existing.companyId !== actor.companyId) throw notFound('interaction');
      if (existing.status !== 'pending') throw new AppError('conflict', `interaction is already ${existing.status}`);
      await permitOnIssue(tx, actor, 'interaction.resolve', { id: existing.issueId, companyId: existing.companyId }, actor.companyId);
      if (actor.kind === 'run') {
        // the ordinary resolver audience holds against agents, watchdogs included
        if (existing.audience === 'human_only') throw new AppError('forbidden', 'interaction audience is human_only: an agent run cannot resolve it');
        if (existing.audience === 'not_creator' && existing.createdByAgentId === actor.agentId) throw new AppError('forbidden', 'interaction audience is not_creator: its creator cannot resolve it');
        if (existing.addresseeAgentId && existing.addresseeAgentId !== actor.agentId) throw new AppError('forbidden', 'interaction is addressed to another agent');
      }
      const { count } = await tx.interaction.updateMany({
        where: { id, status: 'pending' },
        data: { status: body.status, resolution: (body.resolution ?? {}) as object, resolvedAt: new Date(), resolvedByKind: actor.kind, resolvedByAgentId: actor.kind === 'run' ? actor.agentId : null },
      });
      if (count !== 1) throw new AppError('conflict', 'interaction was resolved concurrently');
      await logActivity(tx, { companyId: actor.companyId, actor, action: 'issue.interaction_resolved', entityType: 'issue', entityId: existing.issueId, details: { interactionId: id, status: body.status } });
      return tx.interaction.findUniqueOrThrow({ where: { id } });
    });
    await notifySubtreeChanged(deps, [interaction.issueId], 'interaction_resolved');
    return presentInteraction(interaction);
  });
}
