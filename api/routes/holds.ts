/** Tree holds: pause a subtree, list and read holds, release them (exactly one release wins). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { safeString } from '../../domain/safe-input';
import { issueInCompany, permit } from '../../access/authority';
import type { Deps } from '../../runtime/deps';
import { pauseTree } from '../../holds/pause';
import { holdsRootedAt, holdWithMembersInCompany } from '../../holds/read';
import { releaseHoldsInside, releaseOneHold } from '../../holds/release';
import type { ZodTypeProvider } from '../openapi';
import { answers, list } from '../schemas';
import { ReleaseTreeHoldResult, ResumeTreeResult, TreeHold, TreeHoldWithMembers } from '../schemas-holds';
import { companyActor, idParams } from '../validation';

const treeHoldBody = z
  .object({
    mode: z.enum(['pause', 'resume']),
    reason: safeString().trim().max(2000).optional(),
    wakeAgents: z.boolean().optional(),
  })
  .strict();
const releaseBody = z.object({ wakeAgents: z.boolean().optional() }).strict();

export function registerHoldRoutes(app: FastifyInstance, deps: Deps) {
  const db = deps.db;
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.post(
    '/api/issues/:id/tree-holds',
    {
      schema: {
        summary: 'Pause a subtree (a new hold), or resume it (release every hold inside)',
        params: idParams('id'),
        body: treeHoldBody,
        response: answers({ 200: ResumeTreeResult, 201: TreeHoldWithMembers }),
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const actor = companyActor(request.actor);
      permit(actor, 'hold.manage', { companyId: actor.companyId });
      const body = request.body;
      const issue = await issueInCompany(db, actor, id);
      if (body.mode === 'pause')
        return reply.status(201).send(await pauseTree(deps, actor, issue, body.reason ?? null));
      return reply.status(200).send(await releaseHoldsInside(deps, actor, id, body.wakeAgents ?? false));
    },
  );

  api.get(
    '/api/issues/:id/tree-holds',
    {
      schema: {
        summary: 'List the holds rooted at an issue',
        params: idParams('id'),
        response: answers({ 200: list(TreeHold) }),
      },
    },
    async (request) => {
      const { id } = request.params;
      const actor = companyActor(request.actor);
      permit(actor, 'hold.manage', { companyId: actor.companyId });
      await issueInCompany(db, actor, id);
      return { items: await holdsRootedAt(deps, id) };
    },
  );

  api.get(
    '/api/tree-holds/:holdId',
    {
      schema: {
        summary: 'Read a hold with its members',
        params: idParams('holdId'),
        response: answers({ 200: TreeHoldWithMembers }),
      },
    },
    async (request) => {
      const { holdId } = request.params;
      const actor = companyActor(request.actor);
      permit(actor, 'hold.manage', { companyId: actor.companyId });
      return holdWithMembersInCompany(deps, actor.companyId, holdId);
    },
  );

  api.post(
    '/api/issues/:id/tree-holds/:holdId/release',
    {
      schema: {
        summary: 'Release one hold (409 when not active, or reconciliation_required)',
        params: idParams('id', 'holdId'),
        body: releaseBody,
        response: answers({ 200: ReleaseTreeHoldResult }),
      },
    },
    async (request) => {
      const { id, holdId } = request.params;
      const actor = companyActor(request.actor);
      permit(actor, 'hold.manage', { companyId: actor.companyId });
      // a release the workflow refuses rejects with HoldNotActive, which the error handler answers with 409
      return releaseOneHold(deps, actor, { rootIssueId: id, holdId, wakeAgents: request.body.wakeAgents ?? false });
    },
  );
}
