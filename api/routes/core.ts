/** Companies, agents, issues, comments, wakes and runs. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adapterSchema } from '../../domain/adapter';
import { AppError, notFound } from '../../domain/errors';
import { uuidSchema } from '../../domain/ids';
import { AGENT_STATUSES } from '../../domain/statuses';
import { callerContext, callerWakeReason } from '../../domain/run-directive';
import { safeString } from '../../domain/safe-input';
import { permit } from '../../access/authority';
import { createAgent, createCompany, listAgents, updateAgent } from '../../access/agents';
import type { Deps } from '../../runtime/deps';
import { addComment, createIssue, issueWithBlockers, listIssues, updateIssue, wakeIssue } from '../../issues/issues';
import { runOfCompany, runsOfIssue, stopRunForActor } from '../../runs/runs';
import { createOnce } from '../idempotency';
import type { ZodTypeProvider } from '../openapi';
import { Agent, answers, Comment, CreatedCompany, Issue, IssueWithBlockers, list, Run, Wake } from '../schemas';
import { companyActor, createIssueBody, idParams, titleSchema, updateIssueBody } from '../validation';

const presentComment = (c: {
  id: string;
  issueId: string;
  body: string;
  authorKind: string;
  createdAt: Date;
  messageForRunId: string | null;
  deliveredToRunId: string | null;
  deliveredAt: Date | null;
}) => ({
  id: c.id,
  issueId: c.issueId,
  body: c.body,
  authorKind: c.authorKind,
  createdAt: c.createdAt,
  message: c.messageForRunId
    ? { forRunId: c.messageForRunId, deliveredToRunId: c.deliveredToRunId, deliveredAt: c.deliveredAt }
    : null,
});

const wakeBody = z
  .object({
    idempotencyKey: safeString().min(1).max(200).optional(),
    reason: callerWakeReason().optional(),
    context: callerContext().optional(),
  })
  .strict();
const agentBody = z
  .object({ name: titleSchema, adapter: adapterSchema, status: z.enum(AGENT_STATUSES).optional() })
  .strict();
const agentPatchBody = z
  .object({
    name: titleSchema.optional(),
    status: z.enum(AGENT_STATUSES).optional(),
    adapter: adapterSchema.optional(),
  })
  .strict();

export function registerCoreRoutes(app: FastifyInstance, deps: Deps) {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const companyParams = idParams('companyId');
  const idParam = idParams('id');

  api.post(
    '/api/companies',
    {
      schema: {
        summary: 'Create a company (admin token); returns its board token once',
        body: z.object({ name: titleSchema }).strict(),
        response: answers({ 201: CreatedCompany }),
      },
    },
    async (request, reply) => {
      if (request.actor.kind !== 'admin')
        throw new AppError('forbidden', 'creating companies requires the admin token');
      return reply.status(201).send(await createCompany(deps, request.body.name));
    },
  );

  api.post(
    '/api/companies/:companyId/agents',
    {
      schema: {
        summary: 'Create an agent',
        params: companyParams,
        body: agentBody,
        response: answers({ 201: Agent }),
      },
    },
    async (request, reply) => {
      const { companyId } = request.params;
      const actor = companyActor(request.actor);
      if (actor.companyId !== companyId) throw notFound('company');
      permit(actor, 'agent.manage', { companyId });
      return createOnce(deps, request, reply, companyId, async (remember) => ({
        status: 201,
        body: await createAgent(deps, actor, request.body, (tx, agent) => remember(tx, { status: 201, body: agent })),
      }));
    },
  );

  api.get(
    '/api/companies/:companyId/agents',
    {
      schema: {
        summary: "List a company's agents",
        params: companyParams,
        response: answers({ 200: list(Agent) }),
      },
    },
    async (request) => {
      const { companyId } = request.params;
      const actor = companyActor(request.actor);
      if (actor.companyId !== companyId) throw notFound('company');
      return { items: await listAgents(deps, companyId) };
    },
  );

  api.patch(
    '/api/agents/:id',
    {
      schema: {
        summary: 'Update an agent',
        params: idParam,
        body: agentPatchBody,
        response: answers({ 200: Agent }),
      },
    },
    async (request) => {
      const { id } = request.params;
      const actor = companyActor(request.actor);
      permit(actor, 'agent.manage', { companyId: actor.companyId });
      return updateAgent(deps, actor, id, request.body);
    },
  );

  api.post(
    '/api/companies/:companyId/issues',
    {
      schema: {
        summary: 'Create an issue (optionally watched)',
        params: companyParams,
        body: createIssueBody,
        response: answers({ 201: Issue }),
      },
    },
    async (request, reply) => {
      const { companyId } = request.params;
      const actor = companyActor(request.actor);
      if (actor.companyId !== companyId) throw notFound('company');
      const body = request.body;
      return createOnce(deps, request, reply, companyId, async (remember) => ({
        status: 201,
        body: await createIssue(deps, actor, body, (tx, issue) => remember(tx, { status: 201, body: issue })),
      }));
    },
  );

  api.get(
    '/api/companies/:companyId/issues',
    {
      schema: {
        summary: "List a company's issues, or one parent's children",
        params: companyParams,
        querystring: z.object({ parentId: uuidSchema.optional() }),
        response: answers({ 200: list(Issue) }),
      },
    },
    async (request) => {
      const { companyId } = request.params;
      const actor = companyActor(request.actor);
      if (actor.companyId !== companyId) throw notFound('company');
      return { items: await listIssues(deps, companyId, request.query.parentId) };
    },
  );

  api.get(
    '/api/issues/:id',
    {
      schema: {
        summary: 'Read an issue with its execution blockers',
        params: idParam,
        response: answers({ 200: IssueWithBlockers }),
      },
    },
    async (request) => {
      return issueWithBlockers(deps, companyActor(request.actor), request.params.id);
    },
  );

  api.patch(
    '/api/issues/:id',
    {
      schema: {
        summary: 'Update an issue',
        params: idParam,
        body: updateIssueBody,
        response: answers({ 200: Issue }),
      },
    },
    async (request) => {
      const { id } = request.params;
      return updateIssue(deps, companyActor(request.actor), id, request.body);
    },
  );

  api.post(
    '/api/issues/:id/comments',
    {
      schema: {
        summary: 'Comment on an issue',
        params: idParam,
        body: z.object({ body: safeString().trim().min(1, 'must not be empty').max(100_000) }).strict(),
        response: answers({ 201: Comment }),
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const body = request.body;
      const actor = companyActor(request.actor);
      return createOnce(deps, request, reply, actor.companyId, async (remember) => {
        const comment = await addComment(deps, actor, id, body.body, (tx, created) =>
          remember(tx, { status: 201, body: presentComment(created) }),
        );
        return { status: 201, body: presentComment(comment) };
      });
    },
  );

  api.post(
    '/api/issues/:id/wake',
    {
      schema: {
        summary: "Wake an issue's assignee",
        params: idParam,
        body: wakeBody,
        response: answers({ 200: Wake, 202: Wake }),
      },
    },
    async (request, reply) => {
      const { created, wake } = await wakeIssue(deps, companyActor(request.actor), request.params.id, request.body);
      return reply.status(created ? 202 : 200).send(wake);
    },
  );

  api.get(
    '/api/issues/:id/runs',
    {
      schema: {
        summary: "List an issue's runs",
        params: idParam,
        response: answers({ 200: list(Run) }),
      },
    },
    async (request) => {
      return { items: await runsOfIssue(deps, companyActor(request.actor), request.params.id) };
    },
  );

  api.get(
    '/api/runs/:id',
    {
      schema: {
        summary: 'Read a run',
        params: idParam,
        response: answers({ 200: Run }),
      },
    },
    async (request) => {
      return runOfCompany(deps, companyActor(request.actor), request.params.id);
    },
  );

  api.post(
    '/api/runs/:id/stop',
    {
      schema: {
        summary: 'Stop a run (see also /api/work/:id/stop)',
        params: idParam,
        response: answers({ 200: Run }),
      },
    },
    async (request) => {
      const { id } = request.params;
      return stopRunForActor(deps, id, companyActor(request.actor));
    },
  );
}
