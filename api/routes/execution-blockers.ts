/** Execution blockers: list an issue's, and resolve one (board only) so the interrupted work resumes once. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { permit } from '../../services/authority';
import { safeString } from '../../domain/safe-input';
import type { Deps } from '../../services/deps';
import { BLOCKER_RESOLUTIONS, blockersOfIssue, resolveBlocker } from '../../services/execution-blockers';
import { issueInCompany } from '../../services/issues';
import { companyActor, ids, parse } from '../validation';

const resolveSchema = z.object({ resolution: z.enum(BLOCKER_RESOLUTIONS), note: safeString().trim().max(10_000).optional() }).strict();

export function registerExecutionBlockerRoutes(app: FastifyInstance, deps: Deps) {
  app.get('/api/issues/:id/execution-blockers', async (request) => {
    const { id } = ids(request.params, 'id');
    await issueInCompany(deps.db, companyActor(request.actor), id);
    return { items: await blockersOfIssue(deps.db, id) };
  });

  app.post('/api/execution-blockers/:id/resolve', async (request) => {
    const { id } = ids(request.params, 'id');
    const actor = companyActor(request.actor);
    permit(actor, 'blocker.resolve', { companyId: actor.companyId });
    const body = parse(resolveSchema, request.body);
    return resolveBlocker(deps, id, body, actor);
  });
}
