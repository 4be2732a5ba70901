/** Companies, agents, issues, comments, wakes and runs. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adapterSchema } from '../../domain/adapter';
import { AppError, notFound } from '../../domain/errors';
import { uuidSchema } from '../../domain/ids';
import { AGENT_STATUSES } from '../../domain/statuses';
import { hashToken, newTokenSecret } from '../../domain/tokens';
import { jsonRecord, safeString } from '../../domain/safe-input';
import { logActivity } from '../../services/activity-log';
import { permit, permitOnIssue } from '../../services/authority';
import type { Deps } from '../../services/deps';
import { addComment, createIssue, issueInCompany, presentIssue, updateIssue } from '../../services/issues';
import { stopRunForActor } from '../../services/runs';
import { wakeAndDispatch } from '../../services/wakes';
import { companyActor, ids, issueStatusSchema, parse, titleSchema, watchdogBodySchema } from '../validation';

const presentAgent = (a: { id: string; companyId: string; name: string; status: string; adapter: unknown; createdAt: Date }) => ({
  id: a.id, companyId: a.companyId, name: a.name, status: a.status, adapter: a.adapter, createdAt: a.createdAt,
});

export const presentRun = (r: {
  id: string; companyId: string; issueId: string; agentId: string; status: string; wakeReason: string; context: unknown;
  startedAt: Date | null; finishedAt: Date | null; exitCode: number | null; error: string | null; stopKind: string | null; stoppedByHoldId: string | null; createdAt: Date;
  stopResult: unknown; failureState: string | null; silentState: string | null; supersededByRunId: string | null;
}) => ({
  id: r.id, companyId: r.companyId, issueId: r.issueId, agentId: r.agentId, status: r.status, wakeReason: r.wakeReason, context: r.context,
  startedAt: r.startedAt, finishedAt: r.finishedAt, exitCode: r.exitCode, error: r.error, stopKind: r.stopKind, stoppedByHoldId: r.stoppedByHoldId, createdAt: r.createdAt,
  // supervision: the verified stop (stop-partial attempts included), the failure's reconciliation, silence
  stopResult: r.stopResult, failureState: r.failureState, silentState: r.silentState, supersededByRunId: r.supersededByRunId,
});

export function registerCoreRoutes(app: FastifyInstance, deps: Deps) {
  const db = deps.db;

  app.post('/api/companies', async (request, reply) => {
    if (request.actor.kind !== 'admin') throw new AppError('forbidden', 'creating companies requires the admin token');
    const body = parse(z.object({ name: titleSchema }).strict(), request.body);
    const secret = newTokenSecret('twb');
    const company = await db.$transaction(async (tx) => {
      const created = await tx.company.create({ data: { name: body.name } });
      await tx.apiToken.create({ data: { tokenHash: hashToken(secret), kind: 'board', companyId: created.id } });
      await logActivity(tx, { companyId: created.id, actor: { kind: 'admin' }, action: 'company.created', entityType: 'company', entityId: created.id });
      return created;
    });
    return reply.status(201).send({ id: company.id, name: company.name, boardToken: secret });
  });

  app.post('/api/companies/:companyId/agents', async (request, reply) => {
    const { companyId } = ids(request.params, 'companyId');
    const actor = companyActor(request.actor);
    if (actor.companyId !== companyId) throw notFound('company');
    permit(actor, 'agent.manage', { companyId });
    const body = parse(z.object({ name: titleSchema, adapter: adapterSchema, status: z.enum(AGENT_STATUSES).optional() }).strict(), request.body);
    const agent = await db.$transaction(async (tx) => {
      const created = await tx.agent.create({ data: { companyId, name: body.name, adapter: body.adapter, status: body.status ?? 'active' } });
      await logActivity(tx, { companyId, actor, action: 'agent.created', entityType: 'agent', entityId: created.id });
      return created;
    });
    return reply.status(201).send(presentAgent(agent));
  });

  app.get('/api/companies/:companyId/agents', async (request) => {
    const { companyId } = ids(request.params, 'companyId');
    const actor = companyActor(request.actor);
    if (actor.companyId !== companyId) throw notFound('company');
    const agents = await db.agent.findMany({ where: { companyId }, orderBy: { createdAt: 'asc' } });
    return { items: agents.map(presentAgent) };
  });

  app.patch('/api/agents/:id', async (request) => {
    const { id } = ids(request.params, 'id');
    const actor = companyActor(request.actor);
    permit(actor, 'agent.manage', { companyId: actor.companyId });
    const body = parse(z.object({ name: titleSchema.optional(), status: z.enum(AGENT_STATUSES).optional(), adapter: adapterSchema.optional() }).strict(), request.body);
    const existing = await db.agent.findUnique({ where: { id } });
    if (!existing || existing.companyId !== actor.companyId) throw notFound('agent');
    const agent = await db.$transaction(async (tx) => {
      const updated = await tx.agent.update({ where: { id }, data: body });
      await logActivity(tx, { companyId: actor.companyId, actor, action: 'agent.updated', entityType: 'agent', entityId: id, details: { changes: body } });
      return updated;
    });
    return presentAgent(agent);
  });

  app.post('/api/companies/:companyId/issues', async (request, reply) => {
    const { companyId } = ids(request.params, 'companyId');
    const actor = companyActor(request.actor);
    if (actor.companyId !== companyId) throw notFound('company');
    const body = parse(
      z.object({
        title: titleSchema,
        parentId: uuidSchema.nullable().optional(),
        assigneeAgentId: uuidSchema.nullable().optional(),
        status: issueStatusSchema.optional(),
        watchdog: watchdogBodySchema.optional(),
      }).strict(),
      request.body,
    );
    return reply.status(201).send(await createIssue(deps, actor, body));
  });

  app.get('/api/companies/:companyId/issues', async (request) => {
    const { companyId } = ids(request.params, 'companyId');
    const actor = companyActor(request.actor);
    if (actor.companyId !== companyId) throw notFound('company');
    const query = parse(z.object({ parentId: uuidSchema.optional() }), request.query);
    const issues = await db.issue.findMany({ where: { companyId, ...(query.parentId ? { parentId: query.parentId } : {}) }, include: { blockedBy: true }, orderBy: { createdAt: 'asc' } });
    return { items: issues.map(presentIssue) };
  });

  app.get('/api/issues/:id', async (request) => {
    const { id } = ids(request.params, 'id');
    return presentIssue(await issueInCompany(db, companyActor(request.actor), id));
  });

  app.patch('/api/issues/:id', async (request) => {
    const { id } = ids(request.params, 'id');
    const body = parse(
      z.object({
        title: titleSchema.optional(),
        status: issueStatusSchema.optional(),
        assigneeAgentId: uuidSchema.nullable().optional(),
        blockedByIssueIds: z.array(uuidSchema).max(1000).optional(),
        comment: safeString().max(100_000).optional(),
      }).strict(),
      request.body,
    );
    return updateIssue(deps, companyActor(request.actor), id, body);
  });

  app.post('/api/issues/:id/comments', async (request, reply) => {
    const { id } = ids(request.params, 'id');
    const body = parse(z.object({ body: safeString().trim().min(1, 'must not be empty').max(100_000) }).strict(), request.body);
    const comment = await addComment(deps, companyActor(request.actor), id, body.body);
    return reply.status(201).send({ id: comment.id, issueId: comment.issueId, body: comment.body, authorKind: comment.authorKind, createdAt: comment.createdAt });
  });

  app.post('/api/issues/:id/wake', async (request, reply) => {
    const { id } = ids(request.params, 'id');
    const actor = companyActor(request.actor);
    const body = parse(z.object({ idempotencyKey: safeString().min(1).max(200).optional(), reason: safeString().min(1).max(100).optional(), context: jsonRecord().optional() }).strict(), request.body);
    const issue = await issueInCompany(db, actor, id);
    await permitOnIssue(db, actor, 'issue.wake', issue, actor.companyId);
    if (!issue.assigneeAgentId) throw new AppError('conflict', 'issue has no assignee to wake');
    const { wake, created, outcome } = await wakeAndDispatch(
      deps,
      { companyId: actor.companyId, agentId: issue.assigneeAgentId, issueId: id, reason: body.reason ?? 'manual_wake', context: body.context, idempotencyKey: body.idempotencyKey ? `api:${actor.companyId}:${body.idempotencyKey}` : null },
      actor,
    );
    return reply.status(created ? 202 : 200).send({ id: wake.id, status: wake.status, runId: wake.runId, outcome: outcome.kind, ...(outcome.kind === 'deferred' ? { holdIds: outcome.holdIds } : {}) });
  });

  app.get('/api/issues/:id/runs', async (request) => {
    const { id } = ids(request.params, 'id');
    await issueInCompany(db, companyActor(request.actor), id);
    const runs = await db.run.findMany({ where: { issueId: id }, orderBy: { createdAt: 'asc' } });
    return { items: runs.map(presentRun) };
  });

  app.get('/api/runs/:id', async (request) => {
    const { id } = ids(request.params, 'id');
    const actor = companyActor(request.actor);
    const run = await db.run.findUnique({ where: { id } });
    if (!run || run.companyId !== actor.companyId) throw notFound('run');
    return presentRun(run);
  });

  app.post('/api/runs/:id/stop', async (request) => {
    const { id } = ids(request.params, 'id');
    return presentRun(await stopRunForActor(deps, id, companyActor(request.actor)));
  });
}
