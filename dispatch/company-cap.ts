/**
 * The per-company cap on running agent runs (TREEWARDEN_COMPANY_MAX_RUNNING_RUNS): a run dispatched while its company
 * is at the cap waits as a row, its workflow not started; a claim over the cap (a run that started its workflow as the
 * company filled up) leaves the run queued, marked as waiting, in its workflow. Either starts when a run of the
 * company settles and offers the slot (a waiting workflow also tries again after a backoff, should that be lost).
 * Other companies never wait for it. Whether the company is at its cap is answered by {@link companyAtCap} alone,
 * from the one definition of the slots taken, {@link slotsTaken}.
 */
import type { Deps } from '../runtime/deps';
import type { CompanyCapWaiter } from '../temporal/orchestrator';
import { inCompanyTurn } from './company-turn';
import type { Prisma, Tx } from '../db/prisma';
import { begunAlready, beginRunIn } from './begin';

/**
 * Who asks whether the company is at its cap. A claim (queued → running) and an offer (how many waiting runs a free
 * slot goes to) count the runs that run. A run about to start its workflow (`start`) counts the runs on their way to
 * a claim as well, except itself.
 */
export type CapCount = { for: 'claim' | 'offer' } | { for: 'start'; runId: string };

/**
 * The one definition of the slots of a company's cap that are taken: its running runs and, for a `start`, its queued
 * runs on their way to a claim (a workflow started: not waiting as a row, not stopped), but the starting run itself.
 * Those count for a start because each will claim a slot: a fast release would otherwise start hundreds of workflows
 * before the first claim. A claim counts the running runs only: it is itself one of the runs on their way, and the
 * company's turn orders the claims, so the first ones take the free slots and none waits for a run that has yet to
 * claim. An offer counts the running runs only, as it always has: a run on its way that claims first takes the slot,
 * and the offered run waits again, its place in line kept.
 */
export function slotsTaken(companyId: string, count: CapCount): Prisma.RunWhereInput {
  if (count.for !== 'start') return { companyId, status: 'running' };
  return {
    companyId,
    OR: [
      { status: 'running' },
      { status: 'queued', stopRequestedAt: null, companyCapQueuedAt: null, id: { not: count.runId } },
    ],
  };
}

/** Is the company at its cap? `taken` as {@link slotsTaken} defines it, read through `db` (a turn's transaction). */
export async function companyAtCap(
  deps: Deps,
  db: Tx,
  companyId: string,
  count: CapCount,
): Promise<{ atCap: boolean; taken: number; cap: number }> {
  const cap = deps.config.TREEWARDEN_COMPANY_MAX_RUNNING_RUNS;
  const taken = await db.run.count({ where: slotsTaken(companyId, count) });
  return { atCap: taken >= cap, taken, cap };
}

/** What a run's claim of a slot of its company's cap came to (queued → running, or not). */
export type RunClaim =
  | { kind: 'began' }
  /** cancelled (e.g. by a pause) or stopped before it began */
  | { kind: 'not_queued' }
  | { kind: 'company_at_cap'; running: number; cap: number };

/** queued → running within the company's cap; the claims of one company take their turn (company-turn.ts). */
export async function claimRunWithinCompanyCap(deps: Deps, runId: string): Promise<RunClaim> {
  // a run's company never changes, so it is read before the turn, which then holds a connection only while it runs
  const run = await deps.db.run.findUnique({ where: { id: runId }, select: { companyId: true } });
  if (!run) return { kind: 'not_queued' };
  const claim = await inCompanyTurn(deps.db, 'running-runs', run.companyId, async (tx): Promise<RunClaim | 'freed'> => {
    // before the count, which includes the run itself once it began
    if (await begunAlready(tx, runId)) return { kind: 'began' };
    const { atCap, taken: running, cap } = await companyAtCap(deps, tx, run.companyId, { for: 'claim' });
    if (!atCap) return (await beginRunIn(tx, runId)) ? { kind: 'began' } : 'freed';
    // still queued: it waits, its place in the company's line (and the row's updatedAt) kept from its first wait
    const waits = await tx.$executeRaw`
      UPDATE "Run" SET "companyCapQueuedAt" = coalesce("companyCapQueuedAt", now() AT TIME ZONE 'UTC'),
        "updatedAt" = CASE WHEN "companyCapQueuedAt" IS NULL THEN now() AT TIME ZONE 'UTC' ELSE "updatedAt" END
      WHERE id = ${runId}::uuid AND status = 'queued' AND "stopRequestedAt" IS NULL`;
    return waits === 1 ? { kind: 'company_at_cap', running, cap } : { kind: 'not_queued' };
  });
  if (claim !== 'freed') return claim;
  // stopped after an offer chose it: the slot it was offered goes to the next run in line, or no run might take it
  await offerCompanyCapSlotsOf(deps, run.companyId);
  return { kind: 'not_queued' };
}

/**
 * Whether a run about to start its workflow waits for its company's cap instead, as a row only (its place in line
 * kept in `companyCapQueuedAt`): a backlog beyond the cap, such as a 1,000-member release's, then costs Temporal
 * nothing until a slot frees, and a settlement's offer starts the workflow. The runs whose workflows are on their way
 * to a claim count as taken slots ({@link slotsTaken}, `start`). Decided in the company's turn, so an offer counting
 * its free slots either sees this run waiting or freed its slot before this count; each run counted ends running (its
 * settlement offers the slot) or not queued (its claim offers it).
 */
export async function deferredAtCompanyCap(deps: Deps, companyId: string, runId: string): Promise<boolean> {
  const count: CapCount = { for: 'start', runId };
  // most starts are well below the cap: they do not queue for the company's turn
  if (!(await companyAtCap(deps, deps.db, companyId, count)).atCap) return false;
  return inCompanyTurn(deps.db, 'running-runs', companyId, async (tx) => {
    if (!(await companyAtCap(deps, tx, companyId, count)).atCap) return false;
    const { count: deferred } = await tx.run.updateMany({
      where: { id: runId, status: 'queued', stopRequestedAt: null, companyCapQueuedAt: null },
      data: { companyCapQueuedAt: new Date() },
    });
    return deferred === 1;
  });
}

/**
 * After a run settled: as many of its company's runs waiting for the cap as there are free slots, oldest first, try
 * their claim now, a deferred run's workflow starting with it. It reads in the company's turn, so a claim that was
 * counting the running runs as this one settled has committed its wait and is seen: the offer, not a backoff, is how a
 * waiting run learns of a free slot. A deferred run has no backoff to fall back on, so an offer that could not reach
 * every run it chose throws, and the settlement's activity retries it.
 */
export async function offerCompanyCapSlots(deps: Deps, settledRunId: string): Promise<void> {
  const settled = await deps.db.run.findUnique({ where: { id: settledRunId }, select: { companyId: true } });
  if (settled) await offerCompanyCapSlotsOf(deps, settled.companyId);
}

/** The offer of {@link offerCompanyCapSlots} for one company (a worker's recovery makes it for every company). */
export async function offerCompanyCapSlotsOf(deps: Deps, companyId: string): Promise<void> {
  const waiting = await inCompanyTurn(deps.db, 'running-runs', companyId, async (tx) => {
    const { atCap, taken, cap } = await companyAtCap(deps, tx, companyId, { for: 'offer' });
    if (atCap) return [];
    return tx.run.findMany({
      where: { companyId, status: 'queued', stopRequestedAt: null, companyCapQueuedAt: { not: null } },
      orderBy: { companyCapQueuedAt: 'asc' },
      take: cap - taken,
      select: { id: true, issueId: true },
    });
  });
  if (waiting.length === 0) return;
  // the titles only when a run waits: most settlements offer their slot to nobody (issue 45)
  const titles = new Map(
    (
      await deps.db.issue.findMany({
        where: { id: { in: [...new Set(waiting.map((r) => r.issueId))] } },
        select: { id: true, title: true },
      })
    ).map((i) => [i.id, i.title]),
  );
  const unreached = await tellCompanyCapWaiters(
    deps,
    waiting.map((r) => ({
      kind: 'run',
      run: { runId: r.id, companyId, issueId: r.issueId, title: titles.get(r.issueId) ?? '' },
    })),
  );
  if (unreached > 0) throw new CompanyCapOfferError(companyId, unreached);
}

/** Tells each waiter that a slot of its company's cap freed; a failure is logged. Returns how many it did not reach. */
export async function tellCompanyCapWaiters(deps: Deps, waiting: CompanyCapWaiter[]): Promise<number> {
  let unreached = 0;
  for (const waiter of waiting) {
    await deps.orchestrator.companyCapFreed(waiter).catch((error: unknown) => {
      unreached++;
      deps.log.warn(
        { err: error, waiter },
        'could not tell a run or hold waiting for its company cap that a slot freed',
      );
    });
  }
  return unreached;
}

/** Some runs offered a free slot of their company's cap could not be told; the offer is made again. */
export class CompanyCapOfferError extends Error {
  override readonly name = 'CompanyCapOfferError';
  constructor(
    readonly companyId: string,
    unreached: number,
  ) {
    super(`${unreached} run(s) of company ${companyId} waiting for its cap could not be offered a free slot`);
  }
}
