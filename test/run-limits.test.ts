/**
 * @module A run's limits (issue 25, items 3 and 5): no fixed cap on its length but the optional
 * TREEWARDEN_RUN_MAX_MS, which stops it (verified) as `timed_out` with stop kind `max_duration`; and an output
 * file kept under TREEWARDEN_RUN_OUTPUT_MAX_BYTES while the agent, a real process, goes on writing to it.
 */
import { readFileSync, statSync } from 'node:fs';
import { ownedProcesses } from '../processes/process-table';
import { runFiles } from '../runs/run-files';
import { eventually, runRow, seedCompany, settled, startHarness, type Harness } from '../testing/harness';

const OUTPUT_CAP = 64 * 1024;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    TREEWARDEN_SUPERVISE_EVERY_MS: '200',
    TREEWARDEN_RUN_MAX_MS: '4000',
    TREEWARDEN_RUN_OUTPUT_MAX_BYTES: String(OUTPUT_CAP),
    TREEWARDEN_STOP_GRACE_MS: '1000',
  });
});
afterAll(async () => {
  await h?.close();
});

async function startRun(script: string) {
  const c = await seedCompany(h);
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', script] });
  const issue = await c.issue({ title: 'limited', assigneeAgentId: agent.id });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  expect(wake.status).toBe(202);
  return { c, runId: wake.body.runId as string };
}

test('a run that outlives TREEWARDEN_RUN_MAX_MS is stopped, verified, and settles timed_out', async () => {
  const { c, runId } = await startRun('sleep 120 & sleep 120');
  await eventually('running', async () => (await runRow(h, runId)).status === 'running');
  const run = await settled(h, runId);
  expect(run).toMatchObject({ status: 'timed_out', stopKind: 'max_duration', exitCode: null });
  expect(run.stopResult).toMatchObject({ verdict: 'terminal-clean' });
  expect(ownedProcesses(run)).toEqual([]);
  const stop = await h.services.db.activityLog.findFirstOrThrow({
    where: { action: 'run.stop_requested', entityId: runId },
  });
  expect(stop.actorKind).toBe('system');
  expect((await h.request('GET', `/api/runs/${runId}`, c.token)).body).toMatchObject({ stopKind: 'max_duration' });
});

test('output past the cap keeps its newest half behind a marker while the agent goes on appending', async () => {
  // 300 KB, a pause long enough for supervision ticks to cap it, then the last line
  const { runId } = await startRun("head -c 300000 /dev/zero | tr '\\0' x; echo; sleep 1; echo LAST-LINE");
  const run = await settled(h, runId);
  expect([run.status, run.exitCode]).toEqual(['succeeded', 0]);
  const file = runFiles(runId, null).output;
  const text = readFileSync(file, 'utf8');
  expect(statSync(file).size).toBeLessThanOrEqual(OUTPUT_CAP);
  expect(text).toMatch(
    /^\[treewarden: \d+ earlier bytes of output dropped at [^\]]+, the output cap being 65536 bytes\]\n/,
  );
  expect(text.endsWith('LAST-LINE\n')).toBe(true);
  expect(text).toContain('xxxx');
});
