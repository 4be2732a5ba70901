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
import { blockersByRun, blockersOfIssue, type PresentedBlocker } from '../../services/execution-blockers';
import type { Deps } from '../../services/deps';
import { addComment, createIssue, issueInCompany, presentIssue, updateIssue } from '../../services/issues';
import { stopRunForActor } from '../../services/runs';
import { wakeAndDispatch } from '../../services/wakes';
import { createOnce } from '../idempotency';
import type { ZodTypeProvider } from '../openapi';
import { companyActor, idParams, issueStatusSchema, titleSchema, watchdogBodySchema } from '../validation';

const presentAgent = (a: { id: string; companyId: string; name: string; status: string; adapter: unknown; createdAt: Date }) => ({
  id: a.id, companyId: a.companyId, name: a.name, status: a.status, adapter: a.adapter, createdAt: a.createdAt,
});

const presentComment = (c: { id: string; issueId: string; body: string; authorKind: string; createdAt: Date }) => ({
  id: c.id, issueId: c.issueId, body: c.body, authorKind: c.authorKind, createdAt: c.createdAt,
});

export const presentRun = (r: {
  id: string; companyId: string; issueId: string; agentId: string; status: string; wakeReason: string; context: unknown;
  startedAt: Date | null; finishedAt: Date | null; exitCode: number | null; error: string | null; stopKind: string | null; stoppedByHoldId: string | null; createdAt: Date;
  stopResult: unknown; failureState: string | null; silentState: string | null; supersededByRunId: string | null; endReason?: string | null;
}, executionBlocker: PresentedBlocker | null = null) => ({
  id: r.id, companyId: r.companyId, issueId: r.issueId, agentId: r.agentId, status: r.status, wakeReason: r.wakeReason, context: r.context,
  startedAt: r.startedAt, finishedAt: r.finishedAt, exitCode: r.exitCode, error: r.error, stopKind: r.stopKind, stoppedByHoldId: r.stoppedByHoldId, createdAt: r.createdAt,
  // supervision: the verified stop (stop-partial attempts included), the failure's reconciliation, silence
  stopResult: r.stopResult, failureState: r.failureState, silentState: r.silentState, supersededByRunId: r.supersededByRunId,
  // continuation: `preserved` (resumes on release), `unknown_outcome` (blocked until reconciled) or `before_adapter`
  stopOutcome: (r.stopResult as { outcome?: string } | null)?.outcome ?? null,
  executionBlocker,
  // why it ended, as its agent reported (TREEWARDEN_OUTCOME_FILE): context_overflow, or null
  endReason: r.endReason ?? null,
});

const createIssueBody = z.object({
  title: titleSchema,
  parentId: uuidSchema.nullable().optional(),
  assigneeAgentId: uuidSchema.nullable().optional(),
  status: issueStatusSchema.optional(),
  watchdog: watchdogBodySchema.optional(),
}).strict();
const updateIssueBody = z.object({
  title: titleSchema.optional(),
  status: issueStatusSchema.optional(),
  assigneeAgentId: uuidSchema.nullable().optional(),
  blockedByIssueIds: z.array(uuidSchema).max(1000).optional(),
  comment: safeString().max(100_000).optional(),
}).strict();
const wakeBody = z.object({ idempotencyKey: safeString().min(1).max(200).optional(), reason: safeString().min(1).max(100).optional(), context: jsonRecord().optional() }).strict();
const agentBody = z.object({ name: titleSchema, adapter: adapterSchema, status: z.enum(AGENT_STATUSES).optional() }).strict();
const agentPatchBody = z.object({ name: titleSchema.optional(), status: z.enum(AGENT_STATUSES).optional(), adapter: adapterSchema.optional() }).strict();

export function registerCoreRoutes(app: FastifyInstance, deps: Deps) {
  const db = deps.db;
  const api = app.withTypeProvider<ZodTypeProvider>();
  const companyParams = idParams('companyId');
  const idParam = idParams('id');

  api.post('/api/companies', { schema: { summary: 'Create a company (admin token); returns its board token once', body: z.object({ name: titleSchema }).strict() } }, async (request, reply) => {
    if (request.actor.kind !== 'admin') throw new AppError('forbidden', 'creating companies requires the admin token');
    const body = request.body;
    const secret = newTokenSecret('twb');
    const company = await db.$transaction(async (tx) => {
      const created = await tx.company.create({ data: { name: body.name } });
      await tx.apiToken.create({ data: { tokenHash: hashToken(secret), kind: 'board', companyId: created.id } });
      await logActivity(tx, { companyId: created.id, actor: { kind: 'admin' }, action: 'company.created', entityType: 'company', entityId: created.id });
      return created;
    });
    return reply.status(201).send({ id: company.id, name: company.name, boardToken: secret });
  });

  api.post('/api/companies/:companyId/agents', { schema: { summary: 'Create an agent', params: companyParams, body: agentBody } }, async (request, reply) => {
    const { companyId } = request.params;
    const actor = companyActor(request.actor);
    if (actor.companyId !== companyId) throw notFound('company');
    permit(actor, 'agent.manage', { companyId });
    const body = request.body;
    return createOnce(deps, request, reply, companyId, (remember) =>
      db.$transaction(async (tx) => {
        const created = await tx.agent.create({ data: { companyId, name: body.name, adapter: body.adapter, status: body.status ?? 'active' } });
        await logActivity(tx, { companyId, actor, action: 'agent.created', entityType: 'agent', entityId: created.id });
        const sent = { status: 201, body: presentAgent(created) };
        await remember(tx, sent);
        return sent;
      }),
    );
  });

  api.get('/api/companies/:companyId/agents', { schema: { summary: "List a company's agents", params: companyParams } }, async (request) => {
    const { companyId } = request.params;
    const actor = companyActor(request.actor);
    if (actor.companyId !== companyId) throw notFound('company');
    const agents = await db.agent.findMany({ where: { companyId }, orderBy: { createdAt: 'asc' } });
    return { items: agents.map(presentAgent) };
  });

  api.patch('/api/agents/:id', { schema: { summary: 'Update an agent', params: idParam, body: agentPatchBody } }, async (request) => {
    const { id } = request.params;
    const actor = companyActor(request.actor);
    permit(actor, 'agent.manage', { companyId: actor.companyId });
    const body = request.body;
    const existing = await db.agent.findUnique({ where: { id } });
    if (!existing || existing.companyId !== actor.companyId) throw notFound('agent');
    const agent = await db.$transaction(async (tx) => {
      const updated = await tx.agent.update({ where: { id }, data: body });
      await logActivity(tx, { companyId: actor.companyId, actor, action: 'agent.updated', entityType: 'agent', entityId: id, details: { changes: body } });
      return updated;
    });
    return presentAgent(agent);
  });

  api.post('/api/companies/:companyId/issues', { schema: { summary: 'Create an issue (optionally watched)', params: companyParams, body: createIssueBody } }, async (request, reply) => {
    const { companyId } = request.params;
    const actor = companyActor(request.actor);
    if (actor.companyId !== companyId) throw notFound('company');
    const body = request.body;
    return createOnce(deps, request, reply, companyId, async (remember) => ({
      status: 201,
      body: await createIssue(deps, actor, body, (tx, issue) => remember(tx, { status: 201, body: issue })),
    }));
  });

  api.get('/api/companies/:companyId/issues', { schema: { summary: "List a company's issues, or one parent's children", params: companyParams, querystring: z.object({ parentId: uuidSchema.optional() }) } }, async (request) => {
    const { companyId } = request.params;
    const actor = companyActor(request.actor);
    if (actor.companyId !== companyId) throw notFound('company');
    const query = request.query;
    const issues = await db.issue.findMany({ where: { companyId, ...(query.parentId ? { parentId: query.parentId } : {}) }, include: { blockedBy: true }, orderBy: { createdAt: 'asc' } });
    return { items: issues.map(presentIssue) };
  });

  api.get('/api/issues/:id', { schema: { summary: 'Read an issue with its execution blockers', params: idParam } }, async (request) => {
    const { id } = request.params;
    const issue = await issueInCompany(db, companyActor(request.actor), id);
    return { ...presentIssue(issue), executionBlockers: await blockersOfIssue(db, id) };
  });

  api.patch('/api/issues/:id', { schema: { summary: 'Update an issue', params: idParam, body: updateIssueBody } }, async (request) => {
    const { id } = request.params;
    return updateIssue(deps, companyActor(request.actor), id, request.body);
  });

  api.post('/api/issues/:id/comments', { schema: { summary: 'Comment on an issue', params: idParam, body: z.object({ body: safeString().trim().min(1, 'must not be empty').max(100_000) }).strict() } }, async (request, reply) => {
    const { id } = request.params;
    const body = request.body;
    const actor = companyActor(request.actor);
    return createOnce(deps, request, reply, actor.companyId, async (remember) => {
      const comment = await addComment(deps, actor, id, body.body, (tx, created) => remember(tx, { status: 201, body: presentComment(created) }));
      return { status: 201, body: presentComment(comment) };
    });
  });

  api.post('/api/issues/:id/wake', { schema: { summary: "Wake an issue's assignee", params: idParam, body: wakeBody } }, async (request, reply) => {
    const { id } = request.params;
    const actor = companyActor(request.actor);
    const body = request.body;
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

  api.get('/api/issues/:id/runs', { schema: { summary: "List an issue's runs", params: idParam } }, async (request) => {
    const { id } = request.params;
    await issueInCompany(db, companyActor(request.actor), id);
    const runs = await db.run.findMany({ where: { issueId: id }, orderBy: { createdAt: 'asc' } });
    const blockers = await blockersByRun(db, runs.map((r) => r.id));
    return { items: runs.map((r) => presentRun(r, blockers.get(r.id) ?? null)) };
  });

  api.get('/api/runs/:id', { schema: { summary: 'Read a run', params: idParam } }, async (request) => {
    const { id } = request.params;
    const actor = companyActor(request.actor);
    const run = await db.run.findUnique({ where: { id } });
    if (!run || run.companyId !== actor.companyId) throw notFound('run');
    return presentRun(run, (await blockersByRun(db, [id])).get(id) ?? null);
  });

  api.post('/api/runs/:id/stop', { schema: { summary: 'Stop a run (see also /api/work/:id/stop)', params: idParam } }, async (request) => {
    const { id } = request.params;
    return presentRun(await stopRunForActor(deps, id, companyActor(request.actor)));
  });
}
