import type { Tx } from './prisma';
import { actorId, type Actor, type WatchdogScope } from '../domain/actor';
import { recordNotification } from '../notifications/notifications';

export interface ActivityEntry {
  companyId: string;
  actor: Actor;
  action: string;
  entityType: string;
  entityId: string;
  details?: Record<string, unknown>;
}

/**
 * Append one audit record; watchdog-driven writes also carry the watchdog scope. The few records that
 * are notifiable facts (domain/notifications.ts) also record their notification, in the same transaction.
 */
/** The five facts of a watchdog-driven write: which watchdog, watched issue, review task, run and stop. */
const watchdogAudit = (runId: string, w: WatchdogScope) => ({
  watchdogId: w.watchdogId,
  watchedIssueId: w.watchedIssueId,
  reviewIssueId: w.reviewIssueId,
  runId,
  fingerprint: w.fingerprint,
});

export async function logActivity(tx: Tx, entry: ActivityEntry): Promise<void> {
  const { actor } = entry;
  const scope = actor.kind === 'run' && actor.watchdog ? { watchdog: watchdogAudit(actor.runId, actor.watchdog) } : {};
  const record = await tx.activityLog.create({
    data: {
      companyId: entry.companyId,
      actorKind: actor.kind,
      actorId: actorId(actor),
      runId: actor.kind === 'run' ? actor.runId : null,
      action: entry.action,
      entityType: entry.entityType,
      entityId: entry.entityId,
      details: { ...entry.details, ...scope } as object,
    },
  });
  await recordNotification(tx, entry.companyId, {
    action: entry.action,
    entityType: entry.entityType,
    entityId: entry.entityId,
    details: entry.details ?? {},
    recordId: record.id,
  });
}

/** An audit record written by treewarden itself (no person or run asked for it), in the company of the entity. */
export function logSystemActivity(
  tx: Tx,
  companyId: string,
  entry: Omit<ActivityEntry, 'companyId' | 'actor'>,
): Promise<void> {
  return logActivity(tx, { companyId, actor: { kind: 'system', companyId }, ...entry });
}
