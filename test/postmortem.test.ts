/**
 * @module Postmortem metrics (issue 17): over a scripted tree life, GET /api/issues/:id/postmortem and
 * the workers' Prometheus gauges count what was recorded: productive time of succeeded and inspected
 * runs only, the watchdog's recovery time, one false-stale grade, one orphaned monitor, one context
 * overflow reported by its agent, and the processes a stop-partial stop found.
 */
import { existsSync } from 'node:fs';
import pino from 'pino';
import { Registry } from 'prom-client';
import { createTreewardenClient } from '../client';
import { runFiles } from '../runs/run-files';
import { registerPostmortemMetrics } from '../postmortem/postmortem-metrics';
import { eventually, seedCompany, settled, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    TREEWARDEN_FIRST_RUN_GRACE_MS: '1',
    // a run silent for 2 s is graded suspicious, checked every 300 ms
    TREEWARDEN_SILENT_SUSPICIOUS_MS: '2000',
    TREEWARDEN_SUPERVISE_EVERY_MS: '300',
  });
});
afterAll(async () => {
  await h?.close();
});

const seconds = (run: { startedAt: Date | null; finishedAt: Date | null }) =>
  (run.finishedAt!.getTime() - run.startedAt!.getTime()) / 1000;

test('a scripted tree gives the expected postmortem, through the API and on /metrics', async () => {
  const c = await seedCompany(h);
  const root = await c.issue({ title: 'postmortem root' });
  async function runOnce(script: string, opts: { stop?: (runId: string) => Promise<void> } = {}) {
    const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', script] });
    const issue = await c.issue({
      title: `leaf ${script.slice(0, 20)}`,
      parentId: root.id,
      assigneeAgentId: agent.id,
      status: 'in_progress',
    });
    const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
    expect(wake.status).toBe(202);
    await opts.stop?.(wake.body.runId);
    return { issueId: issue.id, run: await settled(h, wake.body.runId) };
  }
  const stopWhenRunning = async (runId: string) => {
    await eventually(
      'mid-command',
      async () =>
        (await h.services.db.run.findUniqueOrThrow({ where: { id: runId } })).adapterEntered &&
        existsSync(runFiles(runId, null).journal),
    );
    expect((await h.request('POST', `/api/work/${runId}/stop`, c.token, {})).status).toBe(200);
  };

  const succeeded = await runOnce('exit 0');
  const inspected = await runOnce('echo "it broke"; exit 2');
  // the agent ran out of context and says so before exiting
  const overflow = await runOnce('echo \'{"reason":"context_overflow"}\' > "$TREEWARDEN_OUTCOME_FILE"; exit 1');
  // silent for longer than the threshold, then a journal pulse: the suspicious grade was wrong
  const falseStale = await runOnce('sleep 3; echo pulse >> "$TREEWARDEN_JOURNAL_FILE"; sleep 1; exit 0');
  expect(
    await h.services.db.finding.count({ where: { runId: falseStale.run.id, verdict: 'silent-running' } }),
  ).toBeGreaterThanOrEqual(1);
  // a monitor, orphaned when its owner is stopped
  let monitorId = '';
  const monitored = await runOnce('echo up >> "$TREEWARDEN_JOURNAL_FILE"; sleep 600 & wait', {
    stop: async (runId) => {
      await eventually('mid-command', async () => existsSync(runFiles(runId, null).journal));
      const monitor = await h.request('POST', `/api/runs/${runId}/jobs`, c.token, {
        kind: 'monitor',
        command: 'sleep',
        args: ['600'],
      });
      expect(monitor.status).toBe(201);
      monitorId = monitor.body.id;
      await stopWhenRunning(runId);
    },
  });
  await eventually(
    'the monitor stopped with its owner',
    async () => (await h.services.db.job.findUniqueOrThrow({ where: { id: monitorId } })).status === 'stopped',
  );
  // a child that left the group and ignores SIGTERM: the stop is stop-partial. The agent waits for its children on
  // SIGTERM (in the sandbox, an agent that exits takes what it left with it); the journal says both traps are set
  const partial = await runOnce(
    `trap wait TERM; setsid sh -c 'trap "" TERM; echo up >> "$TREEWARDEN_JOURNAL_FILE"; sleep 600' & sleep 600 & wait`,
    { stop: stopWhenRunning },
  );
  const partialFinding = await eventually('the stop-partial finding', () =>
    h.services.db.finding.findFirst({ where: { runId: partial.run.id, verdict: 'stop-partial' } }),
  );
  const detached = (partialFinding.details as { survivors: number[] }).survivors.length;
  expect(detached).toBeGreaterThanOrEqual(1);

  // a stopped verdict, then the next run in the subtree restores the live path
  const watcher = await c.agent();
  const watchdog = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  const review = await eventually('the review run', () =>
    h.services.db.run.findFirst({ where: { agentId: watcher.id } }),
  );
  const reviewRun = await settled(h, review.id);
  expect((await h.request('DELETE', `/api/issues/${root.id}/watchdog`, c.token)).status).toBe(200);
  const verdict = await h.services.db.activityLog.findFirstOrThrow({
    where: { action: 'issue.task_watchdog_triggered', details: { path: ['watchdogId'], equals: watchdog.body.id } },
  });
  const recovery = await runOnce('exit 0');
  const recoverySeconds = (recovery.run.startedAt!.getTime() - verdict.createdAt.getTime()) / 1000;

  const productive = [succeeded.run, inspected.run, overflow.run, falseStale.run, reviewRun, recovery.run].reduce(
    (sum, r) => sum + seconds(r),
    0,
  );
  const response = await h.request('GET', `/api/issues/${root.id}/postmortem`, c.token);
  expect(response.status).toBe(200);
  const p = response.body;
  expect(p.productiveTime).toMatchObject({ unit: 'seconds', counts: expect.stringContaining('succeeded') });
  expect(p.productiveTime.value).toBeCloseTo(productive, 2);
  expect(p.watchdogRecoveryTime).toMatchObject({
    recovered: 1,
    stillStopped: 0,
    p50: { unit: 'seconds' },
    max: { unit: 'seconds' },
  });
  expect(p.watchdogRecoveryTime.p50.value).toBeCloseTo(recoverySeconds, 2);
  expect(p.watchdogRecoveryTime.max.value).toBeCloseTo(recoverySeconds, 2);
  expect(p.falseStaleCount.value).toBe(1);
  expect(p.orphanMonitorCount.value).toBe(1);
  expect(p.contextOverflows.value).toBe(1);
  expect(p.detachedProcessCount.value).toBe(detached);
  expect(p.window).toMatchObject({ from: expect.any(String), to: expect.any(String), description: expect.any(String) });
  for (const figure of [
    p.productiveTime,
    p.falseStaleCount,
    p.orphanMonitorCount,
    p.contextOverflows,
    p.detachedProcessCount,
  ])
    expect(figure.counts.length).toBeGreaterThan(10);
  expect((await h.request('GET', `/api/runs/${overflow.run.id}`, c.token)).body.endReason).toBe('context_overflow');
  expect(monitored.run.status).toBe('cancelled');

  const viaClient = await createTreewardenClient({ baseUrl: h.apiUrl, token: c.token }).getPostmortem(root.id);
  expect({ ...viaClient, window: null }).toEqual({ ...p, window: null });

  // the same facts, fleet-wide, as the workers' Prometheus gauges (this database holds only this tree)
  const registry = new Registry();
  registerPostmortemMetrics(registry, h.services.db, pino({ level: 'silent' }));
  // a scrape waits 2 s at most; on a loaded machine the figures may come with the next one
  const text = await eventually('the postmortem gauges', async () => {
    const scraped = await registry.metrics();
    return /^treewarden_postmortem_false_stale \d/m.test(scraped) ? scraped : null;
  });
  const metric = (line: string) =>
    Number(new RegExp(`^${line.replace(/[{}".]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
  expect(metric('treewarden_postmortem_false_stale')).toBe(1);
  expect(metric('treewarden_postmortem_orphan_monitors')).toBe(1);
  expect(metric('treewarden_postmortem_context_overflows')).toBe(1);
  expect(metric('treewarden_postmortem_detached_processes')).toBe(detached);
  expect(metric('treewarden_postmortem_productive_seconds')).toBeCloseTo(productive, 2);
  expect(metric('treewarden_postmortem_watchdog_recovery_seconds{quantile="1"}')).toBeCloseTo(recoverySeconds, 2);
  expect(metric('treewarden_postmortem_watchdog_stops{state="recovered"}')).toBe(1);

  // another company's tree is 404
  const other = await seedCompany(h, 'Other');
  expect((await h.request('GET', `/api/issues/${root.id}/postmortem`, other.token)).status).toBe(404);
});
