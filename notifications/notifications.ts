/**
 * Webhook notifications, the outbox half: a notifiable fact is recorded in the transaction of the
 * write that made it true (so a crash never loses one and a rollback never sends one), with one
 * delivery row per matching subscription. Workers start each delivery's workflow (./dispatcher.ts);
 * activities/webhook-delivery.ts performs it.
 */
import { randomUUID } from 'node:crypto';
import type { Db, Tx } from '../db/prisma';
import { notificationFor, notificationHash, type RecordedWrite } from '../domain/notifications';
import { DELIVERIES_CHANNEL } from './dispatcher';

/**
 * Called by logActivity for every audit record. Writes nothing for writes that notify nobody; a
 * fact already recorded (the same subject, state version and hash) is skipped by the unique key,
 * so retried writes and re-run activities never notify twice.
 */
export async function recordNotification(tx: Tx, companyId: string, write: RecordedWrite): Promise<void> {
  const fact = notificationFor(write);
  if (!fact) return;
  const id = randomUUID();
  const payload = {
    id,
    event: fact.event,
    kind: fact.kind,
    subject: fact.subject,
    stateVersion: fact.stateVersion,
    companyId,
    issueId: fact.issueId,
    occurredAt: new Date().toISOString(),
    data: fact.data,
  };
  const { count } = await tx.notification.createMany({
    data: [
      {
        id,
        companyId,
        event: fact.event,
        kind: fact.kind,
        subject: fact.subject,
        stateVersion: fact.stateVersion,
        hash: notificationHash(fact),
        payload: payload as object,
      },
    ],
    skipDuplicates: true,
  });
  if (count === 0) return;
  const subscriptions = await tx.webhookSubscription.findMany({
    where: { companyId, deletedAt: null, events: { has: fact.event } },
    select: { id: true },
  });
  if (subscriptions.length === 0) return;
  await tx.webhookDelivery.createMany({
    data: subscriptions.map((s) => ({ notificationId: id, subscriptionId: s.id })),
    skipDuplicates: true,
  });
  // sent at commit: the workers' dispatchers start the deliveries now, not at their next poll
  await tx.$executeRaw`SELECT pg_notify(${DELIVERIES_CHANNEL}, '')`;
}

/** A delivery as the API shows it. */
export async function deliveriesOf(db: Db, subscriptionId: string, limit = 200) {
  const rows = await db.webhookDelivery.findMany({
    where: { subscriptionId },
    include: {
      notification: { select: { event: true, kind: true, subject: true, stateVersion: true, createdAt: true } },
    },
    orderBy: { createdAt: 'desc' },
    take: limit,
  });
  return rows.map((d) => ({
    id: d.id,
    notificationId: d.notificationId,
    event: d.notification.event,
    kind: d.notification.kind,
    subject: d.notification.subject,
    status: d.status,
    attempts: d.attempts,
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
    createdAt: d.createdAt,
    deliveredAt: d.deliveredAt,
    deadAt: d.deadAt,
  }));
}
