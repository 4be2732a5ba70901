/** The one way the service opens PostgreSQL: Prisma's Rust-free client over node-postgres. */
import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from '../generated/prisma/client';

export type Db = PrismaClient;
export type Tx = Prisma.TransactionClient;
export { Prisma };

export function createPrisma(databaseUrl: string, poolMax = 10): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: poolMax });
  // Interactive transactions wait for a pooled connection (maxWait, 2 s by default). Under a burst of clients on
  // a loaded 2-core host that wait is longer than 2 s, and a request would fail although nothing is wrong.
  return new PrismaClient({ adapter, transactionOptions: { maxWait: 10_000, timeout: 15_000 } });
}

/** True when `error` is a unique-constraint violation (P2002). */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}
