/**
 * @module A worker process (workers/main.ts, as deployed) relays the SDK's own metrics through its `/metrics`
 * (issue 28, item 3): pollers and task slots from Temporal core, beside treewarden's own series, in one scrape.
 */
import { eventually, startHarness, type Harness } from '../testing/harness';
import { workerFleet, type WorkerFleet } from '../testing/worker-fleet';

let h: Harness;
let fleet: WorkerFleet;
beforeAll(async () => {
  h = await startHarness({}, { inProcessWorker: false });
  fleet = workerFleet(h);
});
afterAll(async () => {
  await fleet?.close();
  await h?.close();
});

test("one scrape of a worker shows treewarden's series and Temporal core's pollers and slots", async () => {
  const worker = await fleet.start({ TREEWARDEN_WORKER_METRICS_PORT: '0' });
  const url = worker.healthz.replace(/\/healthz$/, '/metrics');
  const text = await eventually('core reports its pollers', async () => {
    const body = await (await fetch(url)).text();
    return /^temporal_num_pollers\{/m.test(body) ? body : null;
  });
  expect(text).toMatch(/^temporal_worker_task_slots_available\{/m);
  expect(text).toMatch(/^# HELP treewarden_/m);
  expect(text).not.toContain('core metrics unavailable');
});
