/**
 * The floor of scenario 2 (issue 26): the cheapest entity workflow Temporal can run, one that handles each signal in
 * one workflow task and does nothing else. What a watchdog's change-to-wake costs beyond this is treewarden's.
 * Bench-only: run by bench/floor-worker.ts on its own task queue, never part of the product's workflows/ bundle.
 */
import { condition, defineSignal, setHandler } from '@temporalio/workflow';

export const pokeSignal = defineSignal('poke');
export const stopSignal = defineSignal('stop');

/** Counts the pokes it is sent until it is told to stop; returns the count, so the bench can check none was lost. */
export async function floorEntity(): Promise<number> {
  let pokes = 0;
  let stopped = false;
  setHandler(pokeSignal, () => {
    pokes += 1;
  });
  setHandler(stopSignal, () => {
    stopped = true;
  });
  await condition(() => stopped);
  return pokes;
}
