/**
 * @module Worker observability: /healthz follows the worker's state and /metrics reports, in
 * Prometheus text, what the activities did (evaluations, wakes, resumes, stop verdicts, latency)
 * and the workflow cache, after real watchdog, hold and run work.
 */
import { NativeConnection } from '@temporalio/worker';
import { createMetrics } from '../workers/metrics';
import { createWorker, type TreewardenWorker } from '../workers/create-worker';
import { startMetricsServer, type MetricsServer } from '../workers/metrics-server';
import { seedCompany, startHarness, workflowBundle, type Harness } from '../testing/harness';
import { holdInterruptsRun, watchdogWakes } from '../testing/scenarios';
import { testStack } from '../testing/stack';

let h: Harness;
let connection: NativeConnection;
let worker: TreewardenWorker;
let running: Promise<void>;
let server: MetricsServer;

beforeAll(async () => {
  // the harness without its worker: this test builds the worker as workers/main.ts does, with metrics
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1' }, { inProcessWorker: false });
  const metrics = createMetrics();
  connection = await NativeConnection.connect({ address: testStack().temporalAddress });
  worker = await createWorker(h.services, { connection, workflowBundle: await workflowBundle(), metrics });
  running = worker.run();
  server = await startMetricsServer({
    host: '127.0.0.1',
    port: 0,
    metrics,
    worker,
    containment: h.services.containment,
    sandbox: h.services.sandbox,
  });
});
afterAll(async () => {
  await server?.close();
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await connection?.close();
  await h?.close();
});

/** The value of one sample line, e.g. `treewarden_hold_resumes_total`. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : NaN;
}

test('/metrics counts evaluations, wakes, stop verdicts, resumes and activity latency; /healthz follows the worker', async () => {
  expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({
    state: 'RUNNING',
    containment: 'cgroup2',
    sandbox: { kind: 'namespaces' },
  });

  const c = await seedCompany(h);
  await watchdogWakes(h, c, { remove: false });
  await holdInterruptsRun(h, c, { release: true });

  const response = await fetch(`${server.url}/metrics`);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  const text = await response.text();
  expect(sample(text, 'treewarden_watchdog_evaluations_total{state="stopped"}')).toBeGreaterThanOrEqual(1);
  expect(sample(text, 'treewarden_watchdog_wakes_total')).toBe(1);
  // one verified stop, clean; whether the prepare step's shell left on SIGTERM or needed the SIGKILL varies
  const clean = ['terminal-clean', 'terminal-clean_after_sigkill'].map(
    (verdict) => sample(text, `treewarden_stop_verdicts_total{verdict="${verdict}"}`) || 0,
  );
  expect(clean[0] + clean[1]).toBe(1);
  expect(text).not.toMatch(/^treewarden_stop_verdicts_total\{verdict="stop-partial/m);
  expect(sample(text, 'treewarden_hold_resumes_total')).toBe(1);
  expect(sample(text, 'treewarden_activity_duration_seconds_count{activity="applyPause",outcome="completed"}')).toBe(1);
  expect(
    sample(text, 'treewarden_activity_duration_seconds_count{activity="executeRun",outcome="completed"}'),
  ).toBeGreaterThanOrEqual(2);
  expect(
    sample(
      text,
      'treewarden_activity_duration_seconds_bucket{le="+Inf",activity="evaluateWatchdog",outcome="completed"}',
    ),
  ).toBeGreaterThanOrEqual(1);
  // the watchdog is still running, so at least its execution is cached
  expect(sample(text, 'treewarden_workflow_cache_size')).toBeGreaterThanOrEqual(1);

  worker.shutdown();
  await running;
  const drained = await fetch(`${server.url}/healthz`);
  expect(drained.status).toBe(503);
  expect(await drained.json()).toEqual({ state: 'STOPPED', containment: 'cgroup2', sandbox: { kind: 'namespaces' } });
});
