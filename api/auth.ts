/** Bearer-token authentication: admin (from the environment), board (per company), run (per run). */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../domain/actor';
import { AppError } from '../domain/errors';
import { actorOfToken } from '../access/api-tokens';
import type { Deps } from '../runtime/deps';

const sameSecret = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export async function authenticate(deps: Deps, request: FastifyRequest): Promise<Actor> {
  const header = request.headers.authorization;
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  if (!match) throw new AppError('unauthorized', 'missing bearer token (Authorization: Bearer <token>)');
  const secret = match[1];
  const adminToken = deps.config.TREEWARDEN_ADMIN_TOKEN;
  if (adminToken && sameSecret(secret, adminToken)) return { kind: 'admin' };
  return actorOfToken(deps, secret, request.routeOptions.config.signOfLife !== false);
}
