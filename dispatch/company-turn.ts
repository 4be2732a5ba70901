import type { Db, Tx } from '../db/prisma';

/** The advisory lock of each kind of capped claim; the running-runs key is the one workers before this file took. */
const TURN_KEY = {
  'running-runs': (companyId: string) => `company-cap:${companyId}`,
  'release-fan-outs': (companyId: string) => `company-release-cap:${companyId}`,
} as const;

/** Per turn key, the settling of this process's last queued turn. */
const queuedTurns = new Map<string, Promise<unknown>>();

/**
 * Runs `work` in a transaction that holds the company's turn for one kind of capped claim: without it two claims
 * could both count cap - 1 and both go ahead. An advisory lock takes the turn between processes; it blocks no write
 * of the company (a row lock on the company would block every insert referencing it). Within a process the turns
 * queue in memory first, so a burst of one company's claims (a 1,000-member release) keeps at most one pooled
 * connection waiting for the lock instead of filling the pool that every other company's work needs.
 */
export async function inCompanyTurn<T>(
  db: Db,
  cap: keyof typeof TURN_KEY,
  companyId: string,
  work: (tx: Tx) => Promise<T>,
): Promise<T> {
  const key = TURN_KEY[cap](companyId);
  const turn = (queuedTurns.get(key) ?? Promise.resolve()).then(() =>
    db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`;
      return work(tx);
    }),
  );
  const settled = turn.catch(() => undefined);
  queuedTurns.set(key, settled);
  try {
    return await turn;
  } finally {
    if (queuedTurns.get(key) === settled) queuedTurns.delete(key);
  }
}
