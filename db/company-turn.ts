import type { Tx } from './prisma';

/** The advisory lock of each kind of capped claim; the running-runs key is the one workers before this file took. */
const TURN_KEY = {
  'running-runs': (companyId: string) => `company-cap:${companyId}`,
  'release-fan-outs': (companyId: string) => `company-release-cap:${companyId}`,
} as const;

/**
 * Takes the company's turn for one kind of capped claim until the transaction ends: without it two claims could both
 * count cap - 1 and both go ahead. An advisory lock blocks no write of the company (a row lock on the company would
 * block every insert referencing it).
 */
export async function takeCompanyTurn(tx: Tx, cap: keyof typeof TURN_KEY, companyId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${TURN_KEY[cap](companyId)}, 0))`;
}
