/**
 * The Prometheus metrics one worker process serves on /metrics. A registry per worker (not
 * prom-client's global one), so tests and several workers in one process never share counters.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  let cachedWorkflows: () => number = () => 0;
  return {
    registry,
    evaluations: new Counter({
      name: 'treewarden_watchdog_evaluations_total',
      help: 'Task-watchdog evaluations, by the state they concluded',
      labelNames: ['state'] as const,
      registers: [registry],
    }),
    wakes: new Counter({
      name: 'treewarden_watchdog_wakes_total',
      help: 'Watchdog agents woken for a new stop fingerprint',
      registers: [registry],
    }),
    resumes: new Counter({
      name: 'treewarden_hold_resumes_total',
      help: 'Interrupted runs re-dispatched by tree-hold releases',
      registers: [registry],
    }),
    stopVerdicts: new Counter({
      name: 'treewarden_stop_verdicts_total',
      help:
        'Verified run stops by verdict: terminal-clean, or stop-partial; ' +
        '_after_sigkill when SIGTERM left survivors',
      labelNames: ['verdict'] as const,
      registers: [registry],
    }),
    activityDuration: new Histogram({
      name: 'treewarden_activity_duration_seconds',
      help: 'Activity execution time on this worker, by activity type and outcome',
      labelNames: ['activity', 'outcome'] as const,
      // from a CAS write (ms) to a fan-out over thousands of members or an agent run (minutes)
      buckets: [0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600, 3600],
      registers: [registry],
    }),
    workflowCacheSize: new Gauge({
      name: 'treewarden_workflow_cache_size',
      help: "Workflow executions held in this worker's sticky cache",
      registers: [registry],
      collect() {
        this.set(cachedWorkflows());
      },
    }),
    /** The cache size is read from the worker at scrape time; the worker exists after the registry. */
    observeWorkflowCache(read: () => number) {
      cachedWorkflows = read;
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
