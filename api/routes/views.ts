/** Read models for people: a company's overview and an issue subtree with its badges (console and CLI). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { notFound } from '../../domain/errors';
import type { Deps } from '../../runtime/deps';
import { companyOverview } from '../../issues/overview';
import { TREE_PAGE_MAX, treeView } from '../../issues/tree-view';
import type { ZodTypeProvider } from '../openapi';
import { answers } from '../schemas';
import { CompanyOverview, TreeNode } from '../schemas-views';
import { companyActor, idParams } from '../validation';

const treeQuery = z
  .object({
    depth: z.coerce.number().int().min(0).max(100).default(1),
    offset: z.coerce.number().int().min(0).default(0),
    limit: z.coerce.number().int().min(1).max(TREE_PAGE_MAX).default(200),
  })
  .strict();

export function registerViewRoutes(app: FastifyInstance, deps: Deps) {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/api/companies/:companyId/overview',
    {
      schema: {
        summary: 'Trees with active holds, watchdogs, live runs, open blockers and unacknowledged findings',
        params: idParams('companyId'),
        response: answers({ 200: CompanyOverview }),
      },
    },
    async (request) => {
      const actor = companyActor(request.actor);
      if (actor.companyId !== request.params.companyId) throw notFound('company');
      return companyOverview(deps.db, actor.companyId);
    },
  );

  api.get(
    '/api/issues/:id/tree',
    {
      schema: {
        summary: 'The subtree with status, assignee, run, hold, watchdog and blocker badges, `depth` levels deep',
        params: idParams('id'),
        querystring: treeQuery,
        response: answers({ 200: TreeNode }),
      },
    },
    async (request) => {
      const actor = companyActor(request.actor);
      const tree = await treeView(deps.db, actor.companyId, request.params.id, request.query);
      if (!tree) throw notFound('issue');
      return tree;
    },
  );
}
