/**
 * Starts the workflows of recorded webhook deliveries (`webhook-delivery:<deliveryId>`), announced with NOTIFY at
 * the recording commit and dispatched by the outbox loop of `db/outbox.ts` (nothing polls).
 */
import { startOutboxDispatcher } from '../db/outbox';
import type { Deps } from '../runtime/deps';

/** The channel a recording transaction notifies when it recorded deliveries. */
export const DELIVERIES_CHANNEL = 'treewarden_webhook_deliveries';

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
    select: { id: true, notificationId: true },
    orderBy: { createdAt: 'asc' },
    take: DISPATCH_BATCH,
  });
  if (due.length === 0) return 0; // the idle round is this one statement
  const notifications = await deps.db.notification.findMany({
    where: { id: { in: [...new Set(due.map((d) => d.notificationId))] } },
    select: { id: true, companyId: true, subject: true, kind: true },
  });
  const notificationOf = new Map(notifications.map((n) => [n.id, n]));
  for (const delivery of due) {
    const notification = notificationOf.get(delivery.notificationId)!;
    await deps.orchestrator.startWebhookDelivery({
      deliveryId: delivery.id,
      companyId: notification.companyId,
      summary: `Webhook: ${notification.kind} of ${notification.subject}`,
    });
    await deps.db.webhookDelivery.updateMany({
      where: { id: delivery.id, dispatchedAt: null },
      data: { dispatchedAt: new Date() },
    });
  }
  return due.length;
}

/** Starts recorded deliveries at start and at each announcement until stopped (`db/outbox.ts`). */
export function startDeliveryDispatcher(deps: Deps, retryMs: number): { stop(): Promise<void> } {
  return startOutboxDispatcher(deps, {
    channel: DELIVERIES_CHANNEL,
    round: () => dispatchPendingDeliveries(deps),
    batch: DISPATCH_BATCH,
    retryMs,
    failure: 'starting webhook deliveries failed; trying again',
  });
}
