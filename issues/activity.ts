/**
 * An issue's audit feed (issue 29, item 6): every mutation recorded against the issue, newest first, paged by a
 * cursor on (createdAt, id) so a page is one index range however deep it is. A watchdog run's writes carry their
 * five facts (db/activity-log.ts), lifted out of `details` so a reader need not know where they are kept.
 */
import type { Db } from '../db/prisma';
import { AppError } from '../domain/errors';

export const ACTIVITY_PAGE_MAX = 200;

export interface WatchdogRunFacts {
  watchdogId: string;
  watchedIssueId: string;
  reviewIssueId: string;
  runId: string;
  fingerprint: string;
}

export interface ActivityItem {
  id: string;
  action: string;
  entityType: string;
  entityId: string;
  actor: { kind: string; agentId: string | null; runId: string | null };
  /** set on every write of a watchdog review run */
  watchdogRun: WatchdogRunFacts | null;
  details: Record<string, unknown>;
  createdAt: Date;
}

interface Position {
  createdAt: Date;
  id: string;
}

const encodeCursor = (p: Position) =>
  Buffer.from(JSON.stringify([p.createdAt.toISOString(), p.id])).toString('base64url');

function decodeCursor(cursor: string): Position {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const createdAt = new Date(String(at));
    if (typeof id === 'string' && /^[0-9a-f-]{36}$/i.test(id) && !Number.isNaN(createdAt.getTime()))
      return { createdAt, id };
  } catch {
    // an unreadable cursor is the caller's, answered below
  }
  throw new AppError('bad_request', 'cursor: not a cursor this feed handed out');
}

function present(row: {
  id: string;
  action: string;
  entityType: string;
  entityId: string;
  actorKind: string;
  actorId: string | null;
  runId: string | null;
  details: unknown;
  createdAt: Date;
}): ActivityItem {
  const { watchdog, ...details } = (row.details ?? {}) as Record<string, unknown> & { watchdog?: WatchdogRunFacts };
  return {
    id: row.id,
    action: row.action,
    entityType: row.entityType,
    entityId: row.entityId,
    actor: { kind: row.actorKind, agentId: row.actorKind === 'run' ? row.actorId : null, runId: row.runId },
    watchdogRun: watchdog ?? null,
    details,
    createdAt: row.createdAt,
  };
}

/** One page of the feed of an issue of `companyId` (the caller has checked it may read the issue). */
export async function issueActivity(
  db: Db,
  companyId: string,
  issueId: string,
  page: { limit: number; cursor?: string },
): Promise<{ items: ActivityItem[]; nextCursor: string | null }> {
  const after = page.cursor ? decodeCursor(page.cursor) : null;
  const rows = await db.activityLog.findMany({
    where: {
      companyId,
      entityId: issueId,
      ...(after
        ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] }
        : {}),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: page.limit + 1,
  });
  const items = rows.slice(0, page.limit);
  return {
    items: items.map(present),
    nextCursor: rows.length > page.limit ? encodeCursor(items[items.length - 1]) : null,
  };
}
