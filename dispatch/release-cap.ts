/**
 * The per-company cap on release fan-outs (TREEWARDEN_COMPANY_MAX_RELEASE_FAN_OUTS): a release over it waits, its hold
 * marked as waiting for its company, and its workflow claims again when one of the company's fan-outs finishes (or
 * after a backoff, should that signal be lost). Other companies never wait for it.
 */
import { inCompanyTurn } from './company-turn';
import type { Deps } from '../runtime/deps';
import { tellCompanyCapWaiters } from './company-cap';

export type ReleaseFanOutClaim = { kind: 'claimed' } | { kind: 'company_at_cap'; fanningOut: number; cap: number };

/**
 * A fan-out slot taken longer ago than this no longer counts: a workflow terminated mid-fan-out never frees its slot
 * itself. A release of tens of thousands of members may outlast it, and then one more fan-out of the company starts.
 */
const FAN_OUT_SLOT_LEASE_MS = 30 * 60_000;

const fanningOutIn = (companyId: string) => ({
  companyId,
  fanningOutSince: { gt: new Date(Date.now() - FAN_OUT_SLOT_LEASE_MS) },
});

/**
 * Takes one of the company's fan-out slots for the hold's release, or marks the hold as waiting for one. The hold's
 * workflow knows its company (from its start); only executions started before it carried one read it here.
 */
export async function claimReleaseFanOut(deps: Deps, holdId: string, companyId?: string): Promise<ReleaseFanOutClaim> {
  const cap = deps.config.TREEWARDEN_COMPANY_MAX_RELEASE_FAN_OUTS;
  const company =
    companyId ?? (await deps.db.treeHold.findUnique({ where: { id: holdId }, select: { companyId: true } }))?.companyId;
  // a removed hold: the release itself refuses it
  if (!company) return { kind: 'claimed' };
  return inCompanyTurn(deps.db, 'release-fan-outs', company, async (tx) => {
    // a retried claim (its activity timed out after the commit) finds its own slot: it counts as claimed
    const fanningOut = await tx.treeHold.count({ where: { ...fanningOutIn(company), id: { not: holdId } } });
    if (fanningOut < cap) {
      // a hold removed since: nothing to mark, and the release itself refuses it
      await tx.treeHold.updateMany({
        where: { id: holdId },
        data: { fanningOutSince: new Date(), waitingForCompanyCapSince: null },
      });
      return { kind: 'claimed' };
    }
    await tx.treeHold.updateMany({
      where: { id: holdId, waitingForCompanyCapSince: null },
      data: { waitingForCompanyCapSince: new Date() },
    });
    return { kind: 'company_at_cap', fanningOut, cap };
  });
}

/**
 * After a release fanned out (or failed to): frees its slot, and as many of the company's waiting releases as there
 * are free slots, oldest first, claim again now. It reads in the company's turn, so a claim that counted the slot
 * still taken has committed its wait and is seen (a lost signal costs a waiting release one backoff).
 */
export async function finishReleaseFanOut(deps: Deps, holdId: string): Promise<void> {
  const [hold] = await deps.db.treeHold.updateManyAndReturn({
    where: { id: holdId },
    data: { fanningOutSince: null },
    select: { companyId: true },
  });
  if (!hold) return;
  const waiting = await inCompanyTurn(deps.db, 'release-fan-outs', hold.companyId, async (tx) => {
    const fanningOut = await tx.treeHold.count({ where: fanningOutIn(hold.companyId) });
    const free = deps.config.TREEWARDEN_COMPANY_MAX_RELEASE_FAN_OUTS - fanningOut;
    if (free <= 0) return [];
    return tx.treeHold.findMany({
      where: { companyId: hold.companyId, waitingForCompanyCapSince: { not: null } },
      orderBy: { waitingForCompanyCapSince: 'asc' },
      take: free,
      select: { id: true },
    });
  });
  // best effort: a hold's release that misses the signal claims again after its backoff
  await tellCompanyCapWaiters(
    deps,
    waiting.map(({ id }) => ({ kind: 'hold', id })),
  );
}
