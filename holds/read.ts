/**
 * Reading tree holds: one hold with its members (their execution blockers, whether each interrupted run's stop
 * is verified) and its stop state, scoped to a company.
 */
import { notFound } from '../domain/errors';
import type { HoldWithMembers } from '../domain/hold-contract';
import { holdStopsOf, runStopOf } from '../domain/hold-stops';
import type { Deps } from '../runtime/deps';
import { blockersByRun } from '../runs/execution-blockers';

async function findHoldWithMembers(deps: Deps, holdId: string): Promise<HoldWithMembers | null> {
  const members = { orderBy: [{ depth: 'asc' as const }, { issueId: 'asc' as const }] };
  const hold = await deps.db.treeHold.findUnique({ where: { id: holdId }, include: { members } });
  if (!hold) return null;
  const runIds = hold.members.flatMap((m) => (m.interruptedRunId ? [m.interruptedRunId] : []));
  const [blockers, runs] = await Promise.all([
    blockersByRun(deps.db, runIds),
    deps.db.run.findMany({
      where: { id: { in: runIds } },
      select: { id: true, status: true, stopRequestedAt: true, stopResult: true },
    }),
  ]);
  const runById = new Map(runs.map((r) => [r.id, r]));
  const withStops = hold.members.map((m) => {
    const run = m.interruptedRunId ? runById.get(m.interruptedRunId) : undefined;
    return {
      ...m,
      executionBlocker: (m.interruptedRunId && blockers.get(m.interruptedRunId)) || null,
      stop: run ? runStopOf(run) : null,
    };
  });
  return { ...hold, ...holdStopsOf(withStops), members: withStops };
}

export async function getHoldWithMembers(deps: Deps, holdId: string): Promise<HoldWithMembers> {
  const hold = await findHoldWithMembers(deps, holdId);
  if (!hold) throw new Error(`tree hold ${holdId} not found`);
  return hold;
}

/** A hold of the company, with its members, or 404. */
export async function holdWithMembersInCompany(deps: Deps, companyId: string, holdId: string) {
  const hold = await findHoldWithMembers(deps, holdId);
  if (!hold || hold.companyId !== companyId) throw notFound('tree hold');
  return hold;
}

/** A hold of the actor's company (and rooted at `rootIssueId` when given), or 404. */
export async function holdInCompany(deps: Deps, companyId: string, holdId: string, rootIssueId?: string) {
  const hold = await deps.db.treeHold.findUnique({ where: { id: holdId } });
  const inScope = hold?.companyId === companyId && (rootIssueId === undefined || hold.rootIssueId === rootIssueId);
  if (!hold || !inScope) throw notFound('tree hold');
  return hold;
}

export function holdsRootedAt(deps: Deps, rootIssueId: string) {
  return deps.db.treeHold.findMany({ where: { rootIssueId }, orderBy: { createdAt: 'asc' } });
}
