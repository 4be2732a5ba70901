/**
 * Webhook notifications, the outbox half: a notifiable fact is recorded in the transaction of the
 * write that made it true (so a crash never loses one and a rollback never sends one), with one
 * delivery row per matching subscription. Workers start each delivery's workflow
 * (`webhook-delivery:<deliveryId>`); activities/webhook-delivery.ts performs it.
 */
import { randomUUID } from 'node:crypto';
import type { Db, Tx } from '../db/prisma';
import { notificationFor, notificationHash, type RecordedWrite } from '../domain/notifications';
import type { Deps } from '../runtime/deps';

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
}

/** Deliveries whose workflow is started per dispatch round: the rest wait one round. */
const DISPATCH_BATCH = 200;

/**
 * Starts the workflows of recorded deliveries that have none yet. Several workers may run this at
 * once: the workflow id is the delivery's, so a second start is a no-op, and `dispatchedAt` is set
 * only after the start, so a worker dying in between leaves the row for the next round.
 */
export async function dispatchPendingDeliveries(deps: Deps): Promise<number> {
  const due = await deps.db.webhookDelivery.findMany({
    where: { status: 'pending', dispatchedAt: null },
    select: { id: true, notification: { select: { companyId: true, subject: true, kind: true } } },
    orderBy: { createdAt: 'asc' },
    take: DISPATCH_BATCH,
  });
  for (const delivery of due) {
    await deps.orchestrator.startWebhookDelivery({
      deliveryId: delivery.id,
      companyId: delivery.notification.companyId,
      summary: `Webhook: ${delivery.notification.kind} of ${delivery.notification.subject}`,
    });
    await deps.db.webhookDelivery.updateMany({
      where: { id: delivery.id, dispatchedAt: null },
      data: { dispatchedAt: new Date() },
    });
  }
  return due.length;
}

/**
 * Runs `dispatchPendingDeliveries` every `everyMs` until stopped. A failed round is logged and the
 * next one tries again: nothing is lost, the rows wait in the database.
 */
export function startDeliveryDispatcher(deps: Deps, everyMs: number): { stop(): Promise<void> } {
  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      try {
        await dispatchPendingDeliveries(deps);
      } catch (error) {
        deps.log.warn({ err: error }, 'starting webhook deliveries failed; the next round tries again');
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, everyMs).unref();
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
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
