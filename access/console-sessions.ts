/**
 * Console sessions as stored: signing in with a board token mints a new board token for the session
 * (its own row: it expires, and signing out revokes it). Expired rows are deleted at each sign-in, so
 * the table holds no more sessions than a working day's sign-ins.
 */
import { AppError } from '../domain/errors';
import { hashToken, newTokenSecret } from '../domain/tokens';
import { logActivity } from '../db/activity-log';
import type { Deps } from '../runtime/deps';

const SESSION_PURPOSE = 'console';
/** A working day: a forgotten tab does not keep a company open for ever. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** The new session's secret and company, or a clear refusal; expired sessions are swept first. */
export async function startConsoleSession(deps: Deps, boardToken: string, now = new Date()) {
  const hash = boardToken.trim() ? hashToken(boardToken.trim()) : null;
  const token = hash ? await deps.db.apiToken.findUnique({ where: { tokenHash: hash } }) : null;
  if (!token || token.revokedAt || token.kind !== 'board' || !token.companyId || token.purpose === SESSION_PURPOSE) {
    throw new AppError('unauthorized', 'not a valid board token');
  }
  const secret = newTokenSecret('tws');
  const companyId = token.companyId;
  await deps.db.$transaction(async (tx) => {
    await tx.apiToken.deleteMany({ where: { purpose: SESSION_PURPOSE, expiresAt: { lte: now } } });
    const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
    const session = await tx.apiToken.create({
      data: {
        tokenHash: hashToken(secret),
        kind: 'board',
        companyId,
        purpose: SESSION_PURPOSE,
        expiresAt,
      },
    });
    const actor = { kind: 'board' as const, companyId };
    await logActivity(tx, {
      companyId,
      actor,
      action: 'console.signed_in',
      entityType: 'company',
      entityId: companyId,
      details: { sessionId: session.id },
    });
  });
  return { secret, companyId };
}

/** The company of a live session (not unknown, expired or revoked), or null. */
export async function consoleSessionCompany(deps: Deps, secret: string): Promise<string | null> {
  const token = await deps.db.apiToken.findUnique({ where: { tokenHash: hashToken(secret) } });
  if (!token || token.purpose !== SESSION_PURPOSE || token.revokedAt || !token.companyId) return null;
  if (token.expiresAt && token.expiresAt.getTime() <= Date.now()) return null;
  return token.companyId;
}

export async function endConsoleSession(deps: Deps, secret: string): Promise<void> {
  await deps.db.apiToken.updateMany({
    where: { tokenHash: hashToken(secret), revokedAt: null },
    data: { revokedAt: new Date() },
  });
}
