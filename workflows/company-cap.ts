/**
 * Claims within a company's cap: an agent run's claim within the cap on running runs (dispatch/company-cap.ts), a
 * hold's release within the cap on release fan-outs (dispatch/release-cap.ts).
 */
import { condition, patched, setCurrentDetails, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import { StateKey } from '../domain/search-attributes';
import { companyCapFreedSignal } from './definitions';
import { bookkeeping } from './stop-and-settle';

/** Runs started before the cap claim without it (beginRun), as they did. */
export const COMPANY_CAP_PATCH = 'company-running-runs-cap';

/** Waiters started before the settlement's offer read in the company's turn rechecked every second at first. */
export const CAP_RECHECK_AS_SAFETY_NET_PATCH = 'company-cap-recheck-as-safety-net';

/**
 * The "slot freed" signal is how a waiter learns of a free slot (the offer reads in the company's turn, so it sees
 * every committed wait); this recheck only bounds what a lost signal (a worker died between the settlement and the
 * signal) costs: 30 s, then a minute. Rechecking every second at first made a 1,000-run backlog claim thousands of
 * times a minute in its company's turn. A run waiting a whole day records about ten thousand events, below the
 * history limit.
 */
const capRecheckDelayMs = (waitsSoFar: number) =>
  patched(CAP_RECHECK_AS_SAFETY_NET_PATCH)
    ? Math.min(30_000 * 2 ** waitsSoFar, 60_000)
    : Math.min(1_000 * 2 ** waitsSoFar, 60_000);

/**
 * Claims until `waitingFor` says the claim is not at the cap (undefined); while it is, the workflow's state is
 * `waiting_company_cap`, its details are what `waitingFor` said, and it claims again when the company frees a slot.
 * Returns the last claim and how many times it waited.
 */
export async function claimWithinCompanyCap<C>(
  claim: () => Promise<C>,
  waitingFor: (claim: C) => string | undefined,
): Promise<{ claim: C; waits: number }> {
  let slotFreed = false;
  setHandler(companyCapFreedSignal, () => void (slotFreed = true));
  for (let waits = 0; ; waits++) {
    const claimed = await claim();
    const waiting = waitingFor(claimed);
    if (waiting === undefined) return { claim: claimed, waits };
    if (waits === 0) upsertSearchAttributes([{ key: StateKey, value: 'waiting_company_cap' }]);
    setCurrentDetails(waiting);
    slotFreed = false;
    await condition(() => slotFreed, capRecheckDelayMs(waits));
  }
}

/**
 * queued → running. While the company is at its cap the run stays queued (its details say how many run) and claims
 * again when a run of the company settles. False when it was no longer queued.
 */
export async function claimQueuedRun(runId: string): Promise<boolean> {
  if (!patched(COMPANY_CAP_PATCH)) {
    return bookkeeping.beginRun.executeWithOptions({ summary: 'Claim the queued run' }, [runId]);
  }
  const summary = { summary: "Claim the queued run within its company's cap" };
  const { claim } = await claimWithinCompanyCap(
    () => bookkeeping.claimRunWithinCompanyCap.executeWithOptions(summary, [runId]),
    (c) =>
      c.kind === 'company_at_cap'
        ? `queued: waiting for the company's cap (${c.running} of ${c.cap} runs running)`
        : undefined,
  );
  return claim.kind === 'began';
}
