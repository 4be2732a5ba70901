/**
 * Console sessions. Signing in with a board token mints a new board token for the session (its own
 * row: it expires, and signing out revokes it) and hands it to the browser only as an httpOnly,
 * SameSite=Strict cookie. Every state-changing console request carries a CSRF token derived from it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors';
import {
  consoleSessionCompany,
  endConsoleSession,
  SESSION_TTL_MS,
  startConsoleSession,
} from '../../access/console-sessions';
import type { Deps } from '../../runtime/deps';

export const SESSION_COOKIE = 'tw_session';
export const CSRF_HEADER = 'x-csrf-token';
export const CSRF_FIELD = '_csrf';

export interface ConsoleSession {
  /** the session's board token: the console calls the API with it */
  secret: string;
  companyId: string;
  csrf: string;
}

/** Bound to the session: a page of another session (or a forged form) cannot produce it. */
export const csrfTokenOf = (secret: string) =>
  createHmac('sha256', secret).update('treewarden console csrf').digest('base64url');

/** A board token for a new session, or a clear refusal. */
export async function signIn(deps: Deps, boardToken: string): Promise<ConsoleSession> {
  const { secret, companyId } = await startConsoleSession(deps, boardToken);
  return { secret, companyId, csrf: csrfTokenOf(secret) };
}

/** The request's live session, or null (no cookie, unknown, expired or revoked). */
export async function sessionOf(deps: Deps, request: FastifyRequest): Promise<ConsoleSession | null> {
  const secret = request.cookies[SESSION_COOKIE];
  const companyId = secret ? await consoleSessionCompany(deps, secret) : null;
  return secret && companyId ? { secret, companyId, csrf: csrfTokenOf(secret) } : null;
}

export async function signOut(deps: Deps, session: ConsoleSession): Promise<void> {
  await endConsoleSession(deps, session.secret);
}

export function setSessionCookie(reply: FastifyReply, request: FastifyRequest, secret: string | null): void {
  const options = { path: '/', httpOnly: true, sameSite: 'strict' as const, secure: request.protocol === 'https' };
  if (secret === null) reply.clearCookie(SESSION_COOKIE, options);
  else reply.setCookie(SESSION_COOKIE, secret, { ...options, maxAge: SESSION_TTL_MS / 1000 });
}

/** Sign-in has no session to bind a token to: a browser's Origin must be this server (no login CSRF). */
export function assertSameOrigin(request: FastifyRequest): void {
  const origin = request.headers.origin;
  if (origin === undefined) return; // not a browser form post (curl, scripts)
  // "null": a sandboxed or no-referrer page elsewhere; the console's pages send their origin
  let host: string | null = null;
  try {
    host = new URL(origin).host;
  } catch {
    host = null;
  }
  if (host !== request.headers.host)
    throw new AppError('forbidden', `sign-in from another origin (${origin}) is refused`);
}

/** State-changing requests: the header (htmx) or the form field (plain forms) must carry the session's token. */
export function assertCsrf(request: FastifyRequest, session: ConsoleSession): void {
  const header = request.headers[CSRF_HEADER];
  const field = (request.body as Record<string, unknown> | null | undefined)?.[CSRF_FIELD];
  const sent = typeof header === 'string' ? header : typeof field === 'string' ? field : '';
  const ok = sent.length === session.csrf.length && timingSafeEqual(Buffer.from(sent), Buffer.from(session.csrf));
  if (!ok)
    throw new AppError('forbidden', `missing or wrong CSRF token (send the page's token in the ${CSRF_HEADER} header)`);
}
