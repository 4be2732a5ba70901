/**
 * Starts the workflows of recorded webhook deliveries (`webhook-delivery:<deliveryId>`). A recording transaction
 * announces its deliveries with NOTIFY, which PostgreSQL sends at commit; every worker LISTENs, so a delivery
 * starts at once whichever process recorded it. Nothing polls: a round runs at start, at
 * each announcement and at each (re)connection of the listener, so deliveries of a worker that died before
 * starting them, or recorded while the listener was down, are found then. Only a failed round is retried on a
 * timer. (A 1 s poll cost every idle worker two statements a second, a 30 s one still showed in every count.)
 */
import pg from 'pg';
import type { Deps } from '../runtime/deps';

/** The channel a recording transaction notifies when it recorded deliveries. */
export const DELIVERIES_CHANNEL = 'treewarden_webhook_deliveries';

/** A lost listening connection is retried this often (or sooner, when the retry interval is shorter). */
const LISTEN_RETRY_MS = 5_000;

/** TCP keepalive on the listening connection: a silently dropped connection fails instead of going deaf. */
const LISTEN_KEEPALIVE_DELAY_MS = 10_000;

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
 * Runs `dispatchPendingDeliveries` at start and at each announcement until stopped; a full batch goes on at once.
 * A failed round is logged and tried again after `retryMs`: nothing is lost, the rows wait in the database.
 */
export function startDeliveryDispatcher(deps: Deps, retryMs: number): { stop(): Promise<void> } {
  let stopped = false;
  let announced = false;
  let wake = () => {};
  const announce = () => {
    announced = true;
    wake();
  };
  const listener = listenForAnnouncements(deps, announce, Math.min(retryMs, LISTEN_RETRY_MS));
  const loop = (async () => {
    while (!stopped) {
      announced = false;
      let failed = false;
      try {
        if ((await dispatchPendingDeliveries(deps)) === DISPATCH_BATCH) continue;
      } catch (error) {
        failed = true;
        deps.log.warn({ err: error, retryMs }, 'starting webhook deliveries failed; trying again');
      }
      if (announced || stopped) continue; // announced during the round: it may have missed those rows
      await new Promise<void>((resolve) => {
        const timer = failed ? setTimeout(resolve, retryMs).unref() : undefined;
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
 * lost. Each (re)connection counts as an announcement: it covers whatever was recorded while nobody listened.
 */
function listenForAnnouncements(deps: Deps, announce: () => void, retryMs: number): { close(): Promise<void> } {
  let closed = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const reconnectLater = (client: pg.Client, error: unknown) => {
    if (closed || current !== client) return;
    current = undefined;
    deps.log.warn({ err: error }, 'webhook delivery listener lost its connection; reconnecting');
    client.end().catch(() => {});
    retry = setTimeout(() => void connect(), retryMs).unref();
  };
  const connect = async () => {
    if (closed) return;
    const client = new pg.Client({
      connectionString: deps.config.DATABASE_URL,
      connectionTimeoutMillis: deps.config.TREEWARDEN_DB_CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: LISTEN_KEEPALIVE_DELAY_MS,
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
