/** Reads what a watchdog's workflow was told: the reason of every subtree change signal in its history. */
import type { WorkflowHandle } from '@temporalio/client';
import { subtreeChangedSignal, type SubtreeChange } from '../workflows/definitions';

/** One entry per `subtreeChanged` signal, in history order: its reason (a coalesced round's reasons, comma-joined). */
export async function subtreeChangeReasons(watchdogWorkflow: WorkflowHandle): Promise<string[]> {
  const history = await watchdogWorkflow.fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const signal = e.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName !== subtreeChangedSignal.name) return [];
    const payload = signal.input!.payloads![0];
    return [(JSON.parse(Buffer.from(payload.data!).toString()) as SubtreeChange).reason];
  });
}
