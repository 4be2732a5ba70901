/**
 * Starts the workflows of recorded webhook deliveries (`webhook-delivery:<deliveryId>`). A recording transaction
 * announces its deliveries with NOTIFY, which PostgreSQL sends at commit; every worker LISTENs, so a delivery
 * starts at once whichever process recorded it. A slow poll finds what no announcement reached: deliveries of a
 * worker that died before starting them, or recorded while the listening connection was down. (A 1 s poll alone
 * cost every worker two statements a second while nothing happened.)
 */
import pg from 'pg';
import type { Deps } from '../runtime/deps';

/** The channel a recording transaction notifies when it recorded deliveries. */
export const DELIVERIES_CHANNEL = 'treewarden_webhook_deliveries';

/** A lost listening connection is retried this often (or at the poll, when that is sooner). */
const LISTEN_RETRY_MS = 5_000;

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

/**
 * Runs `dispatchPendingDeliveries` at each announcement and every `pollMs` until stopped. A failed round is
 * logged and the next one tries again: nothing is lost, the rows wait in the database.
 */
export function startDeliveryDispatcher(deps: Deps, pollMs: number): { stop(): Promise<void> } {
  let stopped = false;
  let announced = false;
  let wake = () => {};
  const announce = () => {
    announced = true;
    wake();
  };
  const listener = listenForAnnouncements(deps, announce, Math.min(pollMs, LISTEN_RETRY_MS));
  const loop = (async () => {
    while (!stopped) {
      announced = false;
      try {
        await dispatchPendingDeliveries(deps);
      } catch (error) {
        deps.log.warn({ err: error }, 'starting webhook deliveries failed; the next round tries again');
      }
      if (announced || stopped) continue; // announced during the round: it may have missed those rows
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs).unref();
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake();
      await loop;
      await listener.close();
    },
  };
}

/**
 * A connection of its own that LISTENs on {@link DELIVERIES_CHANNEL}, reconnecting after `retryMs` when it is
 * lost (the poll covers the gap). Each (re)connection counts as an announcement: it may have missed some.
 */
function listenForAnnouncements(deps: Deps, announce: () => void, retryMs: number): { close(): Promise<void> } {
  let closed = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const reconnectLater = (client: pg.Client, error: unknown) => {
    if (closed || current !== client) return;
    current = undefined;
    deps.log.warn({ err: error }, 'webhook delivery listener lost its connection; polling until it is back');
    client.end().catch(() => {});
    retry = setTimeout(() => void connect(), retryMs).unref();
  };
  const connect = async () => {
    if (closed) return;
    const client = new pg.Client({
      connectionString: deps.config.DATABASE_URL,
      connectionTimeoutMillis: deps.config.TREEWARDEN_DB_CONNECT_TIMEOUT_MS,
    });
    current = client;
    client.on('notification', announce);
    client.on('error', (error) => reconnectLater(client, error));
    client.on('end', () => reconnectLater(client, new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${DELIVERIES_CHANNEL}`);
      announce();
    } catch (error) {
      reconnectLater(client, error);
    }
  };
  void connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await current?.end().catch(() => {});
    },
  };
}
