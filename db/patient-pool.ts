/**
 * A node-postgres pool that waits out a busy moment before it gives up on a connection. On a loaded 2-core host a
 * burst of twenty requests (or of activities on one worker) can find the pool full past its wait, or a new backend
 * slower to answer than the connect timeout; each is a failure to *get* a connection, so no statement reached the
 * database and asking again is safe for any statement, even a compare-and-set. Every other failure is the caller's.
 */
import pg from 'pg';

type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: pg.PoolClient['release'],
) => void;

export class PatientPool extends pg.Pool {
  constructor(config: pg.PoolConfig) {
    super(config);
    // The server may end a connection while it is checked out with no statement in flight (a fault, an operator's
    // pg_terminate_backend): node-postgres then emits 'error' on the client, and with no listener that ends the
    // process. Its next statement fails with the cause, the caller retries, and the pool drops the broken client.
    this.on('connect', (client) => client.on('error', () => undefined));
  }

  // pg's own pool.query() acquires through connect(callback), so both styles wait patiently
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    const acquired = acquirePatiently(() => super.connect(), ACQUIRE_ATTEMPTS);
    if (!callback) return acquired;
    acquired.then(
      (client) => callback(undefined, client, client.release),
      (error: Error) => callback(error, undefined, () => undefined),
    );
  }
}

/** Tries `acquire` up to `attempts` times while it fails only for want of a connection, backing off between tries. */
export async function acquirePatiently<T>(acquire: () => Promise<T>, attempts: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await acquire();
    } catch (error) {
      if (attempt >= attempts || !isAcquireFailure(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** attempt, 4_000)));
    }
  }
}

/** about half a minute with the default 5 s connect timeout: a burst on a loaded host, not an outage */
const ACQUIRE_ATTEMPTS = 5;

/**
 * node-postgres's ways of saying "no connection in time": a full pool's queue, a pooled new connection's connect
 * timeout, and a lone Client's connect timeout
 */
const ACQUIRE_FAILURES = [
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'timeout expired',
];

export const isAcquireFailure = (error: unknown): boolean =>
  error instanceof Error && ACQUIRE_FAILURES.some((message) => error.message.includes(message));
