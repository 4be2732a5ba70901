/** The worker fleet's hosts: declaring one gone for good (admin). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../domain/errors';
import { hostIdSchema } from '../../domain/host';
import type { Deps } from '../../services/deps';
import { declareHostLost } from '../../services/host-stops';

export function registerHostRoutes(app: FastifyInstance, deps: Deps) {
  /** The host and every process on it are gone: its pending stops settle as `host-lost` (never clean). */
  app.post('/api/hosts/:hostId/lost', async (request) => {
    const parsed = z.object({ hostId: hostIdSchema }).safeParse(request.params);
    if (!parsed.success) throw new AppError('bad_request', `malformed host id in path: hostId ${parsed.error.issues[0].message}`);
    const lost = await declareHostLost(deps, parsed.data.hostId, request.actor);
    return { hostId: lost.hostId, declaredAt: lost.declaredAt, settledRuns: lost.settledRuns, settledJobs: lost.settledJobs };
  });
}
