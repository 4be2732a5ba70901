/**
 * The dispatch loop of an outbox table (webhook deliveries, subtree changes): a recording transaction announces its
 * rows with NOTIFY, which PostgreSQL sends at commit; every worker LISTENs, so the rows go on at once whichever
 * process recorded them. Nothing polls: a round runs at start, at each announcement and at each (re)connection of
 * the listener, so rows of a process that died before handling them, or recorded while the listener was down, are
 * found then. Only a failed round is retried on a timer. (A 1 s poll cost every idle worker two statements a
 * second, a 30 s one still showed in every count.)
 */
import pg from 'pg';
import type { Deps } from '../runtime/deps';

/** A lost listening connection is retried this often (or sooner, when the retry interval is shorter). */
const LISTEN_RETRY_MS = 5_000;

/** TCP keepalive on the listening connection: a silently dropped connection fails instead of going deaf. */
const LISTEN_KEEPALIVE_DELAY_MS = 10_000;

export interface OutboxDispatch {
  /** the channel recording transactions notify */
  channel: string;
  /** one round: handles up to `batch` rows and returns how many it handled */
  round: () => Promise<number>;
  /** a round that handled this many goes on at once: more may be waiting */
  batch: number;
  /** a failed round is tried again after this */
  retryMs: number;
  /** the warning a failed round logs */
  failure: string;
}

/** Runs `round` at start and at each announcement until stopped; a failed round is logged and retried later. */
export function startOutboxDispatcher(deps: Deps, dispatch: OutboxDispatch): { stop(): Promise<void> } {
  const { round, batch, retryMs } = dispatch;
  let stopped = false;
  let announced = false;
  let wake = () => {};
  const announce = () => {
    announced = true;
    wake();
  };
  const listener = listenForAnnouncements(deps, dispatch.channel, announce, Math.min(retryMs, LISTEN_RETRY_MS));
  const loop = (async () => {
    while (!stopped) {
      announced = false;
      let failed = false;
      try {
        if ((await round()) === batch) continue;
      } catch (error) {
        failed = true;
        deps.log.warn({ err: error, retryMs }, dispatch.failure);
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
 * A connection of its own that LISTENs on `channel`, reconnecting after `retryMs` when it is lost.
 * Each (re)connection counts as an announcement: it covers whatever was recorded while nobody listened.
 */
function listenForAnnouncements(
  deps: Deps,
  channel: string,
  announce: () => void,
  retryMs: number,
): { close(): Promise<void> } {
  let closed = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const reconnectLater = (client: pg.Client, error: unknown) => {
    if (closed || current !== client) return;
    current = undefined;
    deps.log.warn({ err: error }, `the listener on ${channel} lost its connection; reconnecting`);
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
      await client.query(`LISTEN ${channel}`);
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
