/** A run's begin, queued → running: the claim's write, kept apart from the rest of the lifecycle (runs/runs.ts). */
import type { Tx } from '../db/prisma';
import type { Deps } from '../runtime/deps';
import { recordSubtreeChange } from '../changes/record';

/**
 * queued → running, whatever the company's cap (the claim of runs whose workflow predates the cap,
 * company-cap.ts). False when the run was cancelled (e.g. by a pause) before it began.
 */
export async function beginRun(deps: Deps, runId: string): Promise<boolean> {
  return deps.db.$transaction((tx) => beginRunIn(tx, runId));
}

/** queued → running in the caller's transaction. */
export async function beginRunIn(tx: Tx, runId: string): Promise<boolean> {
  const [begun] = await tx.run.updateManyAndReturn({
    where: { id: runId, status: 'queued', stopRequestedAt: null },
    data: { status: 'running', startedAt: new Date(), companyCapQueuedAt: null },
    select: { issueId: true },
  });
  if (begun) await recordSubtreeChange(tx, [begun.issueId], 'run_started');
  return begun !== undefined;
}
