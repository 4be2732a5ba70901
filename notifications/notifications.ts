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
  // one statement (issue 45: two notifiable facts on a waking change's path): the fact, a delivery per matching
  // subscription, and the announcement at commit that starts them (only when there is one); a fact already recorded
  // inserts nothing, so no delivery either. Times in UTC, as the client writes them.
  await tx.$executeRaw`
    WITH fact AS (
      INSERT INTO "Notification" (id, "companyId", event, kind, subject, "stateVersion", hash, payload, "createdAt")
      VALUES (${id}::uuid, ${companyId}::uuid, ${fact.event}, ${fact.kind}, ${fact.subject}, ${fact.stateVersion},
        ${notificationHash(fact)}, ${JSON.stringify(payload)}::jsonb, clock_timestamp() AT TIME ZONE 'UTC')
      ON CONFLICT DO NOTHING
      RETURNING id
    ),
    deliveries AS (
      INSERT INTO "WebhookDelivery" (id, "notificationId", "subscriptionId", "createdAt")
      SELECT gen_random_uuid(), fact.id, s.id, clock_timestamp() AT TIME ZONE 'UTC'
      FROM fact JOIN "WebhookSubscription" s
        ON s."companyId" = ${companyId}::uuid AND s."deletedAt" IS NULL AND ${fact.event} = ANY(s.events)
      ON CONFLICT DO NOTHING
      RETURNING 1
    )
    SELECT pg_notify(${DELIVERIES_CHANNEL}, '') FROM (SELECT 1 FROM deliveries LIMIT 1) started`;
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
