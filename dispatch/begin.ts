/** A run's begin, queued → running: the claim's write, kept apart from the rest of the lifecycle (runs/runs.ts). */
import type { Tx } from '../db/prisma';
import type { Deps } from '../runtime/deps';
import { recordSubtreeChange } from '../changes/record';

/**
 * queued → running, whatever the company's cap (the claim of runs whose workflow predates the cap,
 * company-cap.ts). False when the run was cancelled (e.g. by a pause) before it began.
 */
export async function beginRun(deps: Deps, runId: string): Promise<boolean> {
  return deps.db.$transaction(async (tx) => (await begunAlready(tx, runId)) || beginRunIn(tx, runId));
}

/**
 * The run is running already: only its own workflow begins a run, so an earlier attempt of this very claim began it.
 * An attempt that outlived its activity's timeout (queued for the company's turn under a burst) commits its begin
 * after the server has scheduled the retry, and an attempt's answer can be lost; the retry must carry on with the run
 * it began, not give it up as "not queued" (which left it running with no process, forever: found by the soak).
 */
export async function begunAlready(tx: Tx, runId: string): Promise<boolean> {
  return (await tx.run.count({ where: { id: runId, status: 'running' } })) === 1;
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
