/**
 * The health check's own connection to PostgreSQL. A probe asks "does the database answer?", so it must not queue
 * behind the requests in the service's pool: under a burst of clients that pool is busy, not broken, and a probe
 * waiting there missed its deadline and reported the API unavailable (found by test/embedded-stack.test.ts in a full
 * run: 32 clients on a loaded 2-core host).
 */
import pg from 'pg';
import type { DbTimeouts } from './prisma';

export interface DatabaseProbe {
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function createDatabaseProbe(databaseUrl: string, timeouts: DbTimeouts): DatabaseProbe {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 1, // one connection: probes are rare, and a second one at the same moment waits for the first's answer
    connectionTimeoutMillis: timeouts.connectTimeoutMs,
    statement_timeout: timeouts.queryTimeoutMs,
    query_timeout: timeouts.queryTimeoutMs,
  });
  // an idle connection the server ended: the pool drops it and the next probe connects again
  pool.on('error', () => undefined);
  return {
    ping: async () => void (await pool.query('SELECT 1')),
    close: () => pool.end(),
  };
}
