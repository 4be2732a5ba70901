/**
 * Scenario 2's floor (issue 26): 1,000 no-op entity workflows (bench/floor-workflow.ts) on their own worker process,
 * on the same dev server as treewarden, offered signals at the rates scenario 2 offers changes, each to a different
 * workflow. Signal-to-handled, read from the histories: a signal's WorkflowExecutionSignaled event to the next
 * WorkflowTaskCompleted. Change-to-wake is reported as a multiple of this floor's p99 at the same rate, so what the
 * dev server and this machine cost is not counted as treewarden's.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { floorEntity, pokeSignal, stopSignal } from './floor-workflow';
import { startBenchProcess } from './processes';
import { inParallel, log, percentile } from './support';
import { paced } from './worlds';

const WORKFLOWS = 1000;
/** between rounds, so one round's backlog (if any) is not counted in the next: the floor drains in far less */
const ROUND_GAP_MS = 5000;

export interface FloorRound {
  rate: number;
  p50: number;
  p99: number;
}

/** One round per entry of `rates`, in order: `WORKFLOWS` signals at that rate, one per workflow. */
export async function signalFloor(client: Client, temporalAddress: string, rates: number[]): Promise<FloorRound[]> {
  const taskQueue = `bench-floor-${randomBytes(4).toString('hex')}`;
  const worker = await startBenchProcess(
    'floor-worker.ts',
    { TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_NAMESPACE: client.options.namespace, FLOOR_TASK_QUEUE: taskQueue },
    'floor worker ready',
  );
  const ids = Array.from({ length: WORKFLOWS }, (_, i) => `${taskQueue}-${i}`);
  try {
    await inParallel(ids, 16, (workflowId) => client.workflow.start(floorEntity, { workflowId, taskQueue }));
    log(`  floor: ${WORKFLOWS} no-op workflows started`);
    for (const rate of rates) {
      await paced(ids.length, rate, (i) => client.workflow.getHandle(ids[i]).signal(pokeSignal));
      await sleep(ROUND_GAP_MS);
    }
    const latencies = rates.map((): number[] => []);
    await inParallel(ids, 16, async (workflowId) => {
      const handled = await signalToHandled(client, workflowId);
      if (handled.length !== rates.length)
        throw new Error(`floor: ${workflowId} handled ${handled.length} signals of ${rates.length}`);
      handled.forEach((ms, round) => latencies[round].push(ms));
    });
    await inParallel(ids, 16, async (workflowId) => {
      const handle = client.workflow.getHandle<typeof floorEntity>(workflowId);
      await handle.signal(stopSignal);
      const pokes = await handle.result();
      if (pokes !== rates.length) throw new Error(`floor: ${workflowId} counted ${pokes} pokes of ${rates.length}`);
    });
    return rates.map((rate, round) => ({
      rate,
      p50: percentile(latencies[round], 50),
      p99: percentile(latencies[round], 99),
    }));
  } catch (error) {
    await inParallel(
      ids,
      16,
      (workflowId) =>
        client.workflow
          .getHandle(workflowId)
          .terminate('bench floor failed')
          .catch(() => undefined), // never started, or already stopped
    );
    throw error;
  } finally {
    await worker.stop();
  }
}

/** Each signal in a workflow's history, in order: ms from its Signaled event to the next completed workflow task. */
async function signalToHandled(client: Client, workflowId: string): Promise<number[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const handled: number[] = [];
  let signaledAt: number[] = [];
  for (const e of history.events ?? []) {
    if (e.workflowExecutionSignaledEventAttributes) signaledAt.push(tsToMs(e.eventTime));
    if (e.workflowTaskCompletedEventAttributes) {
      for (const at of signaledAt) handled.push(tsToMs(e.eventTime) - at);
      signaledAt = [];
    }
  }
  return handled;
}
