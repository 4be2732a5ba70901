/**
 * @module Liveness recovery (issue 44, item 5): an agent-owned `in_progress` issue with no live path for longer than
 * TREEWARDEN_LIVENESS_STALL_MS is woken once per stall (reason `liveness_recovery`, what was found in its context),
 * by the `treewarden-liveness` schedule's pass; the recovery is in the issue's audit feed and notifies
 * `liveness_recovered`. It stands down for a run an operator stopped, a hold, an unknown outcome (an execution
 * blocker) and a stall it already recovered; a thousand stalled issues get one recovery each, at most the company's
 * share per pass, with passes running two at a time and no duplicate. Idle time is made by moving the issue's
 * timestamps back an hour (the threshold is the default half hour), not by waiting.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { recoverStalledIssues } from '../liveness/recovery';
import { createWake } from '../dispatch/wakes';
import { ensureLivenessSchedule, livenessScheduleId } from '../liveness/schedule';
import { runFiles } from '../runs/run-files';
import { eventually, seedCompany, settled, startHarness, type Harness } from '../testing/harness';

const PER_COMPANY = 100;

let h: Harness;
beforeAll(async () => {
  // one running run per company: the thousand recovery wakes wait as rows instead of running agents at once
  h = await startHarness({
    TREEWARDEN_LIVENESS_MAX_PER_COMPANY: String(PER_COMPANY),
    TREEWARDEN_COMPANY_MAX_RUNNING_RUNS: '1',
  });
});
afterAll(async () => {
  await h?.close();
});

type Company = Awaited<ReturnType<typeof seedCompany>>;

/** Its last change, its runs and its wakes an hour ago: idle for longer than the threshold. */
async function idleForAnHour(issueIds: string[]) {
  await h.services.db.$executeRaw`
    UPDATE "Issue" SET "updatedAt" = "updatedAt" - interval '1 hour' WHERE id = ANY(${issueIds}::uuid[])`;
  await h.services.db.$executeRaw`
    UPDATE "Run" SET "createdAt" = "createdAt" - interval '1 hour', "finishedAt" = "finishedAt" - interval '1 hour'
    WHERE "issueId" = ANY(${issueIds}::uuid[])`;
  await h.services.db.$executeRaw`
    UPDATE "WakeRequest" SET "createdAt" = "createdAt" - interval '1 hour' WHERE "issueId" = ANY(${issueIds}::uuid[])`;
}

const recoveryWakes = (issueIds: string[]) =>
  h.services.db.wakeRequest.findMany({ where: { issueId: { in: issueIds }, reason: 'liveness_recovery' } });

async function stalledIssue(c: Company, title: string, parentId?: string) {
  const agent = await c.agent();
  const issue = await c.issue({
    title,
    status: 'in_progress',
    assigneeAgentId: agent.id,
    ...(parentId ? { parentId } : {}),
  });
  return { ...issue, assigneeAgentId: agent.id };
}

test('a stalled issue is recovered once by the scheduled pass: one wake, its audit record and its notification', async () => {
  const c = await seedCompany(h);
  const issue = await stalledIssue(c, 'left in progress');
  const fresh = await stalledIssue(c, 'in progress a moment ago');
  await idleForAnHour([issue.id]);

  expect(await ensureLivenessSchedule(h.services.client, h.env.TREEWARDEN_TASK_QUEUE, 60_000)).toBe('created');
  const scheduleId = livenessScheduleId(h.env.TREEWARDEN_TASK_QUEUE);
  await h.services.client.schedule.getHandle(scheduleId).trigger();
  await eventually('the scheduled pass recovered the stall', async () => (await recoveryWakes([issue.id])).length);
  // the passes below are the test's own: no scheduled one runs beside them
  await h.services.client.schedule.getHandle(scheduleId).delete();

  const [wake] = await recoveryWakes([issue.id]);
  const recovery = await h.services.db.livenessRecovery.findFirstOrThrow({ where: { issueId: issue.id } });
  expect(recovery).toMatchObject({ stallKey: 'never-run', wakeRequestId: wake.id, latestRunId: null });
  expect(recovery.stalledForMs).toBeGreaterThanOrEqual(3_600_000);
  expect(wake.context).toEqual({
    livenessRecovery: {
      recoveryId: recovery.id,
      stalledForMs: recovery.stalledForMs,
      latestRunId: null,
      latestRunStatus: null,
    },
  });
  const feed = await h.request('GET', `/api/issues/${issue.id}/activity`, c.token);
  expect(feed.body.items.map((a: { action: string }) => a.action)).toContain('issue.liveness_recovered');
  expect(
    await h.services.db.notification.count({
      where: { kind: 'liveness_recovered', subject: `liveness-recovery:${recovery.id}` },
    }),
  ).toBe(1);
  expect(await recoveryWakes([fresh.id])).toEqual([]);

  // its recovery run ends and the issue is still stalled: the recovery did not restore a path, so it stands down
  const run = await h.services.db.run.findFirstOrThrow({ where: { issueId: issue.id } });
  expect(run.wakeReason).toBe('liveness_recovery');
  expect((await settled(h, run.id)).status).toBe('succeeded');
  await idleForAnHour([issue.id]);
  const [again, alongside] = await Promise.all([recoverStalledIssues(h.services), recoverStalledIssues(h.services)]);
  expect(again.recovered + alongside.recovered).toBe(0);
  expect(await recoveryWakes([issue.id])).toHaveLength(1);
});

test('it stands down for an operator stop, a hold and an unknown outcome, and recovers the stall beside them', async () => {
  const stopped = await seedCompany(h);
  const sleeper = await stopped.agent({ type: 'process', command: 'sleep', args: ['60'] });
  const stoppedIssue = await stopped.issue({
    title: 'stopped by a person',
    status: 'in_progress',
    assigneeAgentId: sleeper.id,
  });
  const stoppedRun = (await h.request('POST', `/api/issues/${stoppedIssue.id}/wake`, stopped.token, {})).body.runId;
  await eventually(
    'the agent running',
    async () => (await h.services.db.run.findUniqueOrThrow({ where: { id: stoppedRun } })).processGroupId,
  );
  expect((await h.request('POST', `/api/runs/${stoppedRun}/stop`, stopped.token)).status).toBe(200);
  expect(await settled(h, stoppedRun)).toMatchObject({ status: 'cancelled', stopKind: 'operator_stop' });

  const held = await seedCompany(h);
  const heldRoot = await held.issue({ title: 'paused tree' });
  const heldIssue = await stalledIssue(held, 'under the pause', heldRoot.id);
  expect((await h.request('POST', `/api/issues/${heldRoot.id}/tree-holds`, held.token, { mode: 'pause' })).status).toBe(
    201,
  );

  // a pause mid-command with no checkpoint: an unknown outcome, whose execution blocker outlives the release
  const unknown = await seedCompany(h);
  const worker = await unknown.agent({
    type: 'process',
    command: 'sh',
    args: ['-c', 'echo up >> "$TREEWARDEN_JOURNAL_FILE"; sleep 60 & wait'],
  });
  const unknownRoot = await unknown.issue({ title: 'import' });
  const unknownIssue = await unknown.issue({
    title: 'stopped mid-command',
    parentId: unknownRoot.id,
    status: 'in_progress',
    assigneeAgentId: worker.id,
  });
  const unknownRun = (await h.request('POST', `/api/issues/${unknownIssue.id}/wake`, unknown.token, {})).body.runId;
  await eventually('the agent mid-command', async () => existsSync(runFiles(unknownRun, null).journal));
  const pause = await h.request('POST', `/api/issues/${unknownRoot.id}/tree-holds`, unknown.token, { mode: 'pause' });
  await settled(h, unknownRun);
  await h.request('POST', `/api/issues/${unknownRoot.id}/tree-holds/${pause.body.id}/release`, unknown.token, {});
  expect(await h.services.db.executionBlocker.count({ where: { issueId: unknownIssue.id, status: 'active' } })).toBe(1);

  const control = await seedCompany(h);
  const stalled = await stalledIssue(control, 'stalled beside them');

  const all = [stoppedIssue.id, heldIssue.id, unknownIssue.id, stalled.id];
  await idleForAnHour(all);
  await recoverStalledIssues(h.services);
  expect((await recoveryWakes(all)).map((w) => w.issueId)).toEqual([stalled.id]);
  expect(await h.services.db.livenessRecovery.count({ where: { issueId: { in: all } } })).toBe(1);
});

test('a thousand stalled issues get one recovery each, paced per company, with passes two at a time', async () => {
  const big = await seedCompany(h);
  const small = await seedCompany(h);
  // its first recovery's run holds the company's one slot: the others wait as rows, no agent churns through them
  const bigAgent = await big.agent({ type: 'process', command: 'sleep', args: ['120'] });
  const smallAgent = await small.agent();
  const rows = (companyId: string, agentId: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      id: randomUUID(),
      companyId,
      title: `stalled ${i}`,
      status: 'in_progress' as const,
      assigneeAgentId: agentId,
    }));
  const bigIssues = rows(big.companyId, bigAgent.id, 1_000);
  const smallIssues = rows(small.companyId, smallAgent.id, 5);
  await h.services.db.issue.createMany({ data: [...bigIssues, ...smallIssues] });
  const ids = [...bigIssues, ...smallIssues].map((i) => i.id);
  await idleForAnHour(ids);

  const passes: { big: number; small: number }[] = [];
  const recoveriesOf = (companyId: string) => h.services.db.livenessRecovery.count({ where: { companyId } });
  while ((await recoveriesOf(big.companyId)) < 1_000) {
    const [bigBefore, smallBefore] = [await recoveriesOf(big.companyId), await recoveriesOf(small.companyId)];
    await Promise.all([recoverStalledIssues(h.services), recoverStalledIssues(h.services)]);
    passes.push({
      big: (await recoveriesOf(big.companyId)) - bigBefore,
      small: (await recoveriesOf(small.companyId)) - smallBefore,
    });
    if (passes.length > 40) throw new Error(`not all recovered after 40 rounds: ${JSON.stringify(passes)}`);
  }
  // two passes at once take at most two shares of the big company, and the small one is not made to wait behind it
  expect(passes.every((p) => p.big <= 2 * PER_COMPANY)).toBe(true);
  expect(passes.length).toBeGreaterThanOrEqual(1_000 / (2 * PER_COMPANY));
  expect(passes[0].small).toBe(5);
  const wakes = await recoveryWakes(ids);
  expect(wakes).toHaveLength(1_005);
  expect(new Set(wakes.map((w) => w.issueId)).size).toBe(1_005);
  expect(await h.services.db.livenessRecovery.count({ where: { issueId: { in: ids } } })).toBe(1_005);
  // 1,005 recoveries, each a transaction and a dispatch through the company's turn: about 40 s alone, 120 s and more
  // beside the heaviest files of a full parallel run (it ran out of jest's default there); its property is the pacing
}, 300_000);

test('a wake whose dispatcher died before dispatching it is dispatched by the next pass; one a hold defers stays', async () => {
  const c = await seedCompany(h);
  const parent = await c.issue({ title: 'paused' });
  const [stranded, deferred] = [
    await stalledIssue(c, 'woken by a dying API'),
    await stalledIssue(c, 'held', parent.id),
  ];
  expect((await h.request('POST', `/api/issues/${parent.id}/tree-holds`, c.token, { mode: 'pause' })).status).toBe(201);
  // as an API process killed between a wake's commit and its dispatch leaves it: queued, a minute and more ago
  const written = await Promise.all(
    [stranded, deferred].map(async (issue) => {
      const { wake } = await createWake(h.services.db, {
        companyId: c.companyId,
        agentId: issue.assigneeAgentId,
        issueId: issue.id,
        reason: 'manual',
      });
      await h.services.db.$executeRaw`
        UPDATE "WakeRequest" SET "createdAt" = now() - interval '2 minutes' WHERE id = ${wake.id}::uuid`;
      return wake;
    }),
  );
  const pass = await recoverStalledIssues(h.services);
  expect(pass.redispatched).toBeGreaterThanOrEqual(1);
  const [dispatched, held] = await Promise.all(
    written.map((w) => h.services.db.wakeRequest.findUniqueOrThrow({ where: { id: w.id } })),
  );
  expect([dispatched.status, held.status]).toEqual(['claimed', 'queued']);
  expect(await h.services.db.run.count({ where: { wakeRequestId: dispatched.id } })).toBe(1);
});
