/**
 * The per-company cap on running agent runs (TREEWARDEN_COMPANY_MAX_RUNNING_RUNS): a claim over it leaves the run
 * queued, marked as waiting for its company, and its workflow tries again when a run of the company settles (or
 * after a backoff, should that signal be lost). Other companies never wait for it.
 */
import type { Deps } from '../runtime/deps';
import type { CompanyCapWaiter } from '../temporal/orchestrator';
import { inCompanyTurn } from '../db/company-turn';
import { beginRunIn } from './runs';

export type RunClaim =
  | { kind: 'began' }
  /** cancelled (e.g. by a pause) or stopped before it began */
  | { kind: 'not_queued' }
  | { kind: 'company_at_cap'; running: number; cap: number };

/** queued → running within the company's cap; the claims of one company take their turn (db/company-turn.ts). */
export async function claimRunWithinCompanyCap(deps: Deps, runId: string): Promise<RunClaim> {
  const cap = deps.config.TREEWARDEN_COMPANY_MAX_RUNNING_RUNS;
  // a run's company never changes, so it is read before the turn, which then holds a connection only while it runs
  const run = await deps.db.run.findUnique({ where: { id: runId }, select: { companyId: true } });
  if (!run) return { kind: 'not_queued' };
  return inCompanyTurn(deps.db, 'running-runs', run.companyId, async (tx) => {
    const running = await tx.run.count({ where: { companyId: run.companyId, status: 'running' } });
    if (running < cap) return (await beginRunIn(tx, runId)) ? { kind: 'began' } : { kind: 'not_queued' };
    // still queued: it waits, its place in the company's line (and the row's updatedAt) kept from its first wait
    const waits = await tx.$executeRaw`
      UPDATE "Run" SET "companyCapQueuedAt" = coalesce("companyCapQueuedAt", now() AT TIME ZONE 'UTC'),
        "updatedAt" = CASE WHEN "companyCapQueuedAt" IS NULL THEN now() AT TIME ZONE 'UTC' ELSE "updatedAt" END
      WHERE id = ${runId}::uuid AND status = 'queued' AND "stopRequestedAt" IS NULL`;
    return waits === 1 ? { kind: 'company_at_cap', running, cap } : { kind: 'not_queued' };
  });
}

/**
 * After a run settled: as many of its company's runs waiting for the cap as there are free slots, oldest first, try
 * their claim now. It reads in the company's turn, so a claim that was counting the running runs as this one settled
 * has committed its wait and is seen: the signal, not the backoff, is how a waiting run learns of a free slot. Best
 * effort: a lost signal costs a waiting run one backoff (workflows/company-cap.ts), so a failure is logged, not thrown.
 */
export async function offerCompanyCapSlots(deps: Deps, settledRunId: string): Promise<void> {
  const settled = await deps.db.run.findUnique({ where: { id: settledRunId }, select: { companyId: true } });
  if (!settled) return;
  const { companyId } = settled;
  const waiting = await inCompanyTurn(deps.db, 'running-runs', companyId, async (tx) => {
    const running = await tx.run.count({ where: { companyId, status: 'running' } });
    const free = deps.config.TREEWARDEN_COMPANY_MAX_RUNNING_RUNS - running;
    if (free <= 0) return [];
    return tx.run.findMany({
      where: { companyId, status: 'queued', stopRequestedAt: null, companyCapQueuedAt: { not: null } },
      orderBy: { companyCapQueuedAt: 'asc' },
      take: free,
      select: { id: true },
    });
  });
  await tellCompanyCapWaiters(deps, 'run', waiting);
}

/** Tells each waiter that a slot of its company's cap freed; a failure is logged (it waits one backoff longer). */
export async function tellCompanyCapWaiters(deps: Deps, kind: CompanyCapWaiter['kind'], waiting: { id: string }[]) {
  for (const { id } of waiting) {
    await deps.orchestrator.companyCapFreed({ kind, id }).catch((error: unknown) => {
      deps.log.warn(
        { err: error, kind, id },
        'could not tell a workflow waiting for its company cap that a slot freed',
      );
    });
  }
}
