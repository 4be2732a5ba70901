/**
 * The company's scheduling lock: wake dispatch against hold creation. A different lock from the company's turn of a
 * capped claim (company-turn.ts), which orders claims against one another.
 */
import type { Tx } from '../db/prisma';

/**
 * Serialises wake dispatch against hold creation within one company. A hold takes the lock exclusively, so its pause
 * sees every run dispatched before it and every later dispatch sees the hold. Dispatches share it: they never
 * conflict with one another (the wake row lock settles two dispatches of one wake), and an exclusive lock made a
 * release's fan-out run one member at a time (bench scenario 5).
 */
export async function lockCompanyScheduling(tx: Tx, companyId: string, mode: 'hold' | 'dispatch'): Promise<void> {
  if (mode === 'hold') await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${companyId}))`;
  else await tx.$executeRaw`SELECT pg_advisory_xact_lock_shared(hashtext(${companyId}))`;
}
