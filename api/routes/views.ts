/**
 * Read models for people: a company's overview, an issue subtree with its badges and an issue's activity feed
 * (console and CLI).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { notFound } from '../../domain/errors';
import type { Deps } from '../../runtime/deps';
import { companyOverview } from '../../issues/overview';
import { TREE_PAGE_MAX, treeView } from '../../issues/tree-view';
import { ACTIVITY_PAGE_MAX, issueActivity } from '../../issues/activity';
import { issueInCompany } from '../../access/authority';
import type { ZodTypeProvider } from '../openapi';
import { answers } from '../schemas';
import { ActivityPage, CompanyOverview, TreeNode } from '../schemas-views';
import { companyActor, idParams } from '../validation';

const treeQuery = z
  .object({
    depth: z.coerce.number().int().min(0).max(100).default(1),
    offset: z.coerce.number().int().min(0).default(0),
    limit: z.coerce.number().int().min(1).max(TREE_PAGE_MAX).default(200),
  })
  .strict();
const activityQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(ACTIVITY_PAGE_MAX).default(50),
    cursor: z.string().min(1).max(500).optional(),
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

  // a read of the company's own records: whoever may read the issue may read its feed
  api.get(
    '/api/issues/:id/activity',
    {
      schema: {
        summary:
          "The issue's audit feed, newest first: every mutation with its actor, and a watchdog run's watchdog, " +
          'review task, run and fingerprint',
        params: idParams('id'),
        querystring: activityQuery,
        response: answers({ 200: ActivityPage }),
      },
    },
    async (request) => {
      const actor = companyActor(request.actor);
      await issueInCompany(deps.db, actor, request.params.id);
      return issueActivity(deps.db, actor.companyId, request.params.id, request.query);
    },
  );
}
