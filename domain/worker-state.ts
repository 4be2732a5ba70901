import type { State } from '@temporalio/worker';

/**
 * One state for the three pollers: a process whose idle pollers have stopped while its agents' poller drains a run
 * is still draining (saying STOPPED would tell a supervisor it may kill it).
 */
export function combinedState(states: State[]): State {
  if (states.every((state) => state === 'RUNNING')) return 'RUNNING';
  if (states.includes('FAILED')) return 'FAILED';
  // one poller stopped and another not yet told: the process is on its way down
  if (states.includes('RUNNING')) return 'STOPPING';
  return STATES_TOWARDS_STOPPED.find((state) => states.includes(state)) ?? 'STOPPED';
}

const STATES_TOWARDS_STOPPED: State[] = ['INITIALIZED', 'STOPPING', 'DRAINING', 'DRAINED', 'STOPPED'];
