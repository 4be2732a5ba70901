/** The `Idempotency-Key` header of the routes that create things (see db/idempotency.ts). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors';
import type { Deps } from '../runtime/deps';
import {
  oncePerIdempotencyKey,
  requestHashOf,
  type IdempotencyClaim,
  type RememberReply,
  type StoredReply,
} from '../db/idempotency';

const KEY_PATTERN = /^[\x21-\x7e]{1,200}$/;

/** The request's claim on its key, or null without the header. A malformed key is a 400. */
export function idempotencyClaim(request: FastifyRequest, companyId: string): IdempotencyClaim | null {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return null;
  if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
    throw new AppError('bad_request', 'Idempotency-Key header: must be one value of 1 to 200 visible ASCII characters');
  }
  const actor = request.actor.kind === 'run' ? `run:${request.actor.runId}` : request.actor.kind;
  return {
    companyId,
    key,
    requestHash: requestHashOf({
      route: `${request.method} ${request.routeOptions.url}`,
      actor,
      params: request.params,
      body: request.body,
    }),
  };
}

/** Creates once per key and sends the reply; a replay is marked with `Idempotent-Replayed: true`. */
export async function createOnce(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  companyId: string,
  create: (remember: RememberReply) => Promise<StoredReply>,
): Promise<FastifyReply> {
  const result = await oncePerIdempotencyKey(deps.db, idempotencyClaim(request, companyId), create);
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return reply.status(result.status).send(result.body);
}
