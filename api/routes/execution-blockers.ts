/** Execution blockers: list an issue's, and resolve one (board only) so the interrupted work resumes once. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { issueInCompany, permit } from '../../access/authority';
import { safeString } from '../../domain/safe-input';
import type { Deps } from '../../runtime/deps';
import { BLOCKER_RESOLUTIONS, blockersOfIssue, resolveBlocker } from '../../runs/execution-blockers';
import type { ZodTypeProvider } from '../openapi';
import { answers, ExecutionBlocker, list } from '../schemas';
import { companyActor, idParams } from '../validation';

const resolveSchema = z
  .object({ resolution: z.enum(BLOCKER_RESOLUTIONS), note: safeString().trim().max(10_000).optional() })
  .strict();

export function registerExecutionBlockerRoutes(app: FastifyInstance, deps: Deps) {
  const api = app.withTypeProvider<ZodTypeProvider>();
  api.get(
    '/api/issues/:id/execution-blockers',
    {
      schema: {
        summary: "List an issue's execution blockers",
        params: idParams('id'),
        response: answers({ 200: list(ExecutionBlocker) }),
      },
    },
    async (request) => {
      const { id } = request.params;
      await issueInCompany(deps.db, companyActor(request.actor), id);
      return { items: await blockersOfIssue(deps.db, id) };
    },
  );

  api.post(
    '/api/execution-blockers/:id/resolve',
    {
      schema: {
        summary: 'Resolve an execution blocker (board): the interrupted work resumes once',
        params: idParams('id'),
        body: resolveSchema,
        response: answers({ 200: ExecutionBlocker }),
      },
    },
    async (request) => {
      const { id } = request.params;
      const actor = companyActor(request.actor);
      permit(actor, 'blocker.resolve', { companyId: actor.companyId });
      const body = request.body;
      return resolveBlocker(deps, id, body, actor);
    },
  );
}
