/**
 * How many workflows one worker keeps cached. The SDK's default budgets about 1.7 MiB of heap per cached workflow
 * (600 per GiB above 200 MiB); treewarden's workflows run with the OpenTelemetry workflow interceptors, and a cached
 * watchdog measured 2.07 MiB with them (0.23 MiB without; bench/workflow-footprint.ts), so the SDK's default filled
 * the workflow thread's heap before the cache was full (bench scenario 6 died with ERR_WORKER_OUT_OF_MEMORY).
 * Evicted workflows replay on their next task, so a smaller cache costs CPU, never correctness.
 */
const CACHED_WORKFLOW_BUDGET_MIB = 2.5;
/** the heap the workflow thread needs besides its cached workflows, as the SDK reckons it */
const HEAP_RESERVE_MIB = 200;

/** The default cache size for a workflow thread whose heap is limited to `heapLimitMiB` (at least the SDK's 10). */
export function defaultMaxCachedWorkflows(heapLimitMiB: number): number {
  return Math.max(Math.floor((heapLimitMiB - HEAP_RESERVE_MIB) / CACHED_WORKFLOW_BUDGET_MIB), 10);
}
