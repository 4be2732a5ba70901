/** The exits of a stop's blocked leaves, for its review wake (issue 29, item 4): read only when a review is woken. */
import type { Tx } from '../db/prisma';
import { describeBlockedLeaf, type BlockedLeafExit } from '../domain/blocked-exit';
import type { StoppedLeaf } from '../domain/watchdog';

export async function blockedLeafExits(tx: Tx, leaves: readonly StoppedLeaf[]): Promise<BlockedLeafExit[]> {
  const blocked = leaves.filter((l) => l.status === 'blocked');
  if (blocked.length === 0) return [];
  const [reasons, blockingIssues] = await Promise.all([
    tx.issue.findMany({ where: { id: { in: blocked.map((l) => l.id) } }, select: { id: true, blockedReason: true } }),
    tx.issue.findMany({
      where: { id: { in: [...new Set(blocked.flatMap((l) => l.blockerIds))] } },
      select: { id: true, status: true },
    }),
  ]);
  const reasonOf = new Map(reasons.map((r) => [r.id, r.blockedReason]));
  const statusOf = new Map(blockingIssues.map((b) => [b.id, b.status as string]));
  return blocked.map((leaf) =>
    describeBlockedLeaf(
      leaf,
      // a blocker deleted since is no longer there to wait for
      leaf.blockerIds.filter((id) => statusOf.has(id)).map((id) => ({ id, status: statusOf.get(id)! })),
      reasonOf.get(leaf.id) ?? null,
    ),
  );
}
