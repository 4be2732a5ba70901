/** Task queue names, imported by workflows: nothing here may pull a library into the workflow bundle. */

/**
 * The task queue only the workers of one host poll (Temporal's worker-specific task queue
 * pattern): everything that reads or signals a run's processes is scheduled there. Prefixed by
 * the shared queue, so deployments (and test files) sharing one namespace never cross.
 */
export function hostQueue(sharedTaskQueue: string, hostId: string): string {
  return `${sharedTaskQueue}-host:${hostId}`;
}

/**
 * The queue of the agents' own activities (a run's adapter): each lasts as long as its agent, so they have a slot
 * budget of their own (TREEWARDEN_WORKER_MAX_AGENT_RUNS) and a worker supervising many agents still serves the short
 * activities (claims, settlements, release fan-outs) on the shared queue at once.
 */
export function agentQueue(sharedTaskQueue: string): string {
  return `${sharedTaskQueue}-agents`;
}
