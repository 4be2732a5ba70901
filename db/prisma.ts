/** The one way the service opens PostgreSQL: Prisma's Rust-free client over node-postgres. */
import { PrismaPg } from '@prisma/adapter-pg';
import { PatientPool } from './patient-pool';
import { Prisma, PrismaClient } from '../generated/prisma/client';

export type Db = PrismaClient;
export type Tx = Prisma.TransactionClient;
export { Prisma };

/** Called inside the creating transaction (an Idempotency-Key's reply is stored there). */
export type OnCreated<T> = (tx: Tx, created: T) => Promise<void>;

export interface DbTimeouts {
  /** connecting, or waiting for a free pooled connection */
  connectTimeoutMs: number;
  /** one statement: enforced by the server (statement_timeout) and by the client (query_timeout) */
  queryTimeoutMs: number;
}

/**
 * Every call is time-bounded: without these a wedged database hung /healthz, requests and a
 * worker's shutdown for minutes. The client-side read timeout is a little longer than the server's
 * statement_timeout, so a live server reports its own cancellation first.
 */
export function createPrisma(databaseUrl: string, timeouts: DbTimeouts, poolMax: number): PrismaClient {
  const pool = new PatientPool({
    connectionString: databaseUrl,
    max: poolMax,
    connectionTimeoutMillis: timeouts.connectTimeoutMs,
    statement_timeout: timeouts.queryTimeoutMs,
    query_timeout: timeouts.queryTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
  });
  const adapter = new PrismaPg(pool, { disposeExternalPool: true });
  // Interactive transactions wait for a pooled connection (maxWait, 2 s by default). Under a burst of clients on
  // a loaded 2-core host that wait is longer than 2 s, and a request would fail although nothing is wrong.
  return new PrismaClient({ adapter, transactionOptions: { maxWait: 10_000, timeout: 15_000 } });
}

const CLIENT_TIMEOUT_MARGIN_MS = 1_000;

export const dbTimeoutsOf = (config: {
  TREEWARDEN_DB_CONNECT_TIMEOUT_MS: number;
  TREEWARDEN_DB_QUERY_TIMEOUT_MS: number;
}): DbTimeouts => ({
  connectTimeoutMs: config.TREEWARDEN_DB_CONNECT_TIMEOUT_MS,
  queryTimeoutMs: config.TREEWARDEN_DB_QUERY_TIMEOUT_MS,
});

/** True when `error` is a unique-constraint violation (P2002). */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

/** The health check's question: the database answers a query. */
export async function pingDatabase(db: Db): Promise<void> {
  await db.$queryRaw`SELECT 1`;
}
