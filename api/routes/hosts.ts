/** The worker fleet's hosts: declaring one gone for good (admin). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../domain/errors';
import { hostIdSchema } from '../../domain/host';
import type { Deps } from '../../runtime/deps';
import { declareHostLost } from '../../processes/host-stops';
import type { ZodTypeProvider } from '../openapi';
import { answers } from '../schemas';
import { LostHost } from '../schemas-supervision';

export function registerHostRoutes(app: FastifyInstance, deps: Deps) {
  const api = app.withTypeProvider<ZodTypeProvider>();
  /** The host and every process on it are gone: its pending stops settle as `host-lost` (never clean). */
  api.post(
    '/api/hosts/:hostId/lost',
    {
      schema: {
        summary: 'Declare a host gone for good (admin): its pending stops settle as host-lost',
        params: z.object({ hostId: hostIdSchema }),
        response: answers({ 200: LostHost }),
      },
    },
    async (request) => {
      const lost = await declareHostLost(deps, request.params.hostId, request.actor);
      return {
        hostId: lost.hostId,
        declaredAt: lost.declaredAt,
        settledRuns: lost.settledRuns,
        settledJobs: lost.settledJobs,
      };
    },
  );
}
