/**
 * @module Retention against the real stack: after a scripted day of work aged past TREEWARDEN_RETENTION_DAYS, the
 * retention workflow deletes the finished runs (rows, tokens, findings, folders), the released hold's members and
 * claims, the old log, webhook deliveries and notifications about finished things and `Idempotency-Key` records, and
 * keeps the live run, the active hold and the active watchdog (their deliveries too); a second pass removes nothing,
 * and one at zero days leaves only rows of that live state. A run that ran on another host leaves its folder to that
 * host's worker, whose sweep removes it. With a retention of zero days a replayed wake key is still idempotent and a
 * just-released hold's claims stay.
 */
import { existsSync, utimesSync } from 'node:fs';
import { workflowId } from '../domain/ids';
import type { RetentionCounts } from '../domain/retention';
import { retentionScheduleId, ensureRetentionSchedule } from '../retention/schedule';
import { runFiles } from '../runs/run-files';
import { eventually, seedCompany, settled, startHarness, type Harness } from '../testing/harness';
import { holdInterruptsRun, retentionPasses, runFails, watchdogWakes } from '../testing/scenarios';
import { startWebhookReceiver, type WebhookReceiver } from '../testing/webhook-receiver';
import { sweepHost } from '../workers/host-sweep';
import { censusOfRetainedRows } from './support/live-state';

let h: Harness;
let receiver: WebhookReceiver;
// a Standard Webhooks secret: whsec_ and the base64 of the key
const SECRET = `whsec_${Buffer.from('retention-secret-0123456789').toString('base64')}`;
beforeAll(async () => {
  // the receiver listens on 127.0.0.1
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1', TREEWARDEN_WEBHOOK_ALLOW_PRIVATE: 'true' });
  receiver = await startWebhookReceiver(SECRET);
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

const runIdOf = (agentRunWorkflowId: string) => agentRunWorkflowId.replace(/^agent-run:/, '');
const AGE = "interval '40 days'";

async function pass(): Promise<RetentionCounts> {
  return (await retentionPasses(h)).removed;
}

/** Everything written so far happened 40 days ago: the rows' times, the holds' releases and the run folders. */
async function ageEverything(): Promise<void> {
  const { db } = h.services;
  await db.$executeRawUnsafe(
    `UPDATE "Run" SET "createdAt" = "createdAt" - ${AGE}, "updatedAt" = "updatedAt" - ${AGE},
       "finishedAt" = "finishedAt" - ${AGE}`,
  );
  for (const table of ['WakeRequest', 'ActivityLog', 'Notification', 'IdempotencyRecord', 'ApiToken', 'Finding'])
    await db.$executeRawUnsafe(`UPDATE "${table}" SET "createdAt" = "createdAt" - ${AGE}`);
  await db.$executeRawUnsafe(
    `UPDATE "WebhookDelivery" SET "createdAt" = "createdAt" - ${AGE}, "deliveredAt" = "deliveredAt" - ${AGE},
       "deadAt" = "deadAt" - ${AGE}`,
  );
  await db.$executeRawUnsafe(`UPDATE "TreeHold" SET "releasedAt" = "releasedAt" - ${AGE}`);
  const longAgo = new Date(Date.now() - 40 * 24 * 60 * 60_000);
  for (const run of await db.run.findMany({ select: { id: true } })) {
    const folder = runFiles(run.id, null).runDir;
    if (existsSync(folder)) utimesSync(folder, longAgo, longAgo);
  }
}

async function liveRun(c: Awaited<ReturnType<typeof seedCompany>>) {
  const agent = await c.agent({ type: 'process', command: 'sleep', args: ['600'] });
  const issue = await c.issue({ title: 'long migration', assigneeAgentId: agent.id, status: 'in_progress' });
  const woken = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  expect(woken.status).toBe(202);
  const run = await eventually('the live run running', () =>
    h.services.db.run.findFirst({ where: { issueId: issue.id, status: 'running' } }),
  );
  await eventually('the live run writing its folder', async () => existsSync(runFiles(run.id, null).output));
  return run;
}

test('the schedule is created once, named treewarden-retention (per task queue), and runs the retention workflow', async () => {
  const { client, config } = h.services;
  expect(await ensureRetentionSchedule(client, config.TREEWARDEN_TASK_QUEUE)).toBe('created');
  expect(await ensureRetentionSchedule(client, config.TREEWARDEN_TASK_QUEUE)).toBe('existed');
  const schedule = client.schedule.getHandle(retentionScheduleId(config.TREEWARDEN_TASK_QUEUE));
  try {
    const description = await schedule.describe();
    expect(description.action).toMatchObject({ type: 'startWorkflow', workflowType: 'retentionWorkflow' });
    expect(retentionScheduleId('treewarden')).toBe('treewarden-retention');
  } finally {
    await schedule.delete();
  }
});

/** A subscription to every event, created under an Idempotency-Key (so the day has an IdempotencyRecord too). */
async function subscribeWithIdempotencyKey(c: Awaited<ReturnType<typeof seedCompany>>) {
  const created = await fetch(`${h.apiUrl}/api/companies/${c.companyId}/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json', 'idempotency-key': 'hook-1' },
    body: JSON.stringify({
      url: receiver.url,
      events: ['phase_start', 'new_blocker', 'terminal_result'],
      secret: SECRET,
    }),
  });
  expect(created.status).toBe(201);
  expect(await h.services.db.idempotencyRecord.count({ where: { companyId: c.companyId } })).toBe(1);
}

/** An agent whose command does not exist: a provider failure, whose unknown outcome is a failed-uninspected finding. */
async function runWithFinding(c: Awaited<ReturnType<typeof seedCompany>>): Promise<string> {
  const agent = await c.agent({ type: 'process', command: 'treewarden-no-such-command' });
  const issue = await c.issue({ title: 'missing tool', assigneeAgentId: agent.id, status: 'todo' });
  const woken = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  expect(woken.status).toBe(202);
  const finding = await eventually('the failed-uninspected finding', () =>
    h.services.db.finding.findFirst({ where: { runId: woken.body.runId, verdict: 'failed-uninspected' } }),
  );
  return finding.runId;
}

/** the delivered deliveries, each with its notification's subject */
async function settledDeliveries() {
  return eventually('every webhook delivery settled', async () => {
    const deliveries = await h.services.db.webhookDelivery.findMany({ include: { notification: true } });
    return deliveries.length > 0 && deliveries.every((d) => d.status === 'delivered') ? deliveries : null;
  });
}

test('a day of work aged past the retention: finished work goes, live and guarded state stays, twice the same', async () => {
  const c = await seedCompany(h, 'Retention Co');
  await subscribeWithIdempotencyKey(c);
  const released = await holdInterruptsRun(h, c, { release: true });
  const active = await holdInterruptsRun(h, c, { release: false });
  const failed = await runFails(h, c);
  const watched = await watchdogWakes(h, c, { remove: false });
  const live = await liveRun(c);
  const uninspected = await runWithFinding(c);
  const { db } = h.services;
  const releasedHold = await db.treeHold.findFirstOrThrow({ where: { rootIssueId: released.issueId } });
  const activeHold = await db.treeHold.findFirstOrThrow({ where: { rootIssueId: active.issueId } });
  const activeHoldRun = runIdOf(active.stoppedRunWorkflowId);
  const finishedRuns = [
    ...[released.stoppedRunWorkflowId, released.resumedRunWorkflowId!, failed.runWorkflowId].map(runIdOf),
    uninspected,
  ];
  expect(await db.resumeClaim.count({ where: { holdId: releasedHold.id } })).toBe(1);
  // a run stopped before its adapter started may have written no folder
  const finishedFolders = finishedRuns.map((runId) => runFiles(runId, null).runDir).filter((dir) => existsSync(dir));
  expect(finishedFolders.length).toBeGreaterThan(0);
  // the failed run ran on another host (its folder here stands for that host's): this pass leaves it to that host
  const failedRun = runIdOf(failed.runWorkflowId);
  const elsewhere = runFiles(failedRun, null).runDir;
  expect(existsSync(elsewhere)).toBe(true);
  await db.run.update({ where: { id: failedRun }, data: { hostId: 'host-b' } });
  expect(await db.finding.count({ where: { runId: { in: finishedRuns } } })).toBeGreaterThan(0);
  const watchdogRow = await db.watchdog.findFirstOrThrow({ where: { issueId: watched.issueId } });
  const liveSubjects = [`tree-hold:${activeHold.id}`, `task-watchdog:${watchdogRow.id}`];
  const deliveries = await settledDeliveries();
  const aboutLiveState = deliveries.filter((d) => liveSubjects.includes(d.notification.subject)).map((d) => d.id);
  // the active hold's pause and the active watchdog's stop were delivered: those deliveries must stay
  expect(aboutLiveState.length).toBeGreaterThanOrEqual(2);
  expect(deliveries.length).toBeGreaterThan(aboutLiveState.length);

  await ageEverything();
  const removed = await pass();

  expect(removed).toMatchObject({ holdMembers: expect.any(Number), resumeClaims: 1, idempotencyRecords: 1 });
  expect(removed.runs).toBeGreaterThanOrEqual(finishedRuns.length);
  // a run stopped in its prepare step never got a token
  expect(removed.runTokens).toBeGreaterThan(0);
  expect(removed.activityLog).toBeGreaterThan(0);
  expect(removed.findings).toBeGreaterThan(0);
  expect(removed.webhookDeliveries).toBe(deliveries.length - aboutLiveState.length);
  expect(removed.notifications).toBeGreaterThan(0);
  expect(await db.run.count({ where: { id: { in: finishedRuns } } })).toBe(0);
  expect(await db.apiToken.count({ where: { runId: { in: finishedRuns } } })).toBe(0);
  expect(await db.finding.count({ where: { runId: { in: finishedRuns } } })).toBe(0);
  expect((await db.webhookDelivery.findMany()).map((d) => d.id).sort()).toEqual([...aboutLiveState].sort());
  expect(await db.idempotencyRecord.count()).toBe(0);
  // the other host's folder stays until that host's worker sweeps
  expect(existsSync(elsewhere)).toBe(true);
  expect(await db.expiredRunFolder.findMany({ select: { runId: true, hostId: true } })).toEqual([
    { runId: failedRun, hostId: 'host-b' },
  ]);
  expect(await sweepHost({ ...h.services, hostId: 'host-b' })).toMatchObject({ expiredRunFoldersRemoved: 1 });
  expect(await db.expiredRunFolder.count()).toBe(0);
  for (const folder of finishedFolders) expect(existsSync(folder)).toBe(false);
  // the released hold keeps its row: a second release is still refused as not active
  expect(await db.treeHoldMember.count({ where: { holdId: releasedHold.id } })).toBe(0);
  expect(await db.resumeClaim.count({ where: { holdId: releasedHold.id } })).toBe(0);
  const again = await h.request(
    'POST',
    `/api/issues/${released.issueId}/tree-holds/${releasedHold.id}/release`,
    c.token,
    {},
  );
  expect(again.status).toBe(409);

  // live: the running run with its folder, token and log; the active hold and the run it interrupted
  expect(await db.run.findUnique({ where: { id: live.id } })).toMatchObject({ status: 'running' });
  expect(existsSync(runFiles(live.id, null).runDir)).toBe(true);
  expect(await db.apiToken.count({ where: { runId: live.id } })).toBe(1);
  expect(await db.treeHoldMember.count({ where: { holdId: activeHold.id } })).toBeGreaterThan(0);
  expect(await db.run.count({ where: { id: activeHoldRun } })).toBe(1);
  expect(existsSync(runFiles(activeHoldRun, null).runDir)).toBe(true);
  // the active watchdog's current review run and its keyed wake
  const reviewRun = runIdOf(watched.reviewRunWorkflowId);
  expect(await db.run.count({ where: { id: reviewRun } })).toBe(1);
  expect(await db.wakeRequest.count({ where: { runId: reviewRun } })).toBe(1);
  const watchdog = await h.services.client.workflow.getHandle(workflowId.taskWatchdog(watched.issueId)).describe();
  expect(watchdog.status.name).toBe('RUNNING');

  const second = await pass();
  expect(Object.values(second).every((count) => count === 0)).toBe(true);

  // at zero days, only the live run, the active hold and the active watchdog (with its current review) remain
  h.services.config.TREEWARDEN_RETENTION_DAYS = 0;
  try {
    await pass();
  } finally {
    h.services.config.TREEWARDEN_RETENTION_DAYS = 30;
  }
  const census = await censusOfRetainedRows(db, {
    runIds: [live.id, activeHoldRun, reviewRun],
    holdIds: [activeHold.id],
    watchdogIds: [watchdogRow.id],
    watchedIssueIds: [watched.issueId],
  });
  expect(census.strays).toEqual(Object.fromEntries(Object.keys(census.counts).map((table) => [table, []])));
  expect(census.counts).toMatchObject({
    Run: 3,
    'ApiToken (run)': 1,
    WebhookDelivery: aboutLiveState.length,
    IdempotencyRecord: 0,
    ExpiredRunFolder: 0,
  });
  expect(census.counts.TreeHoldMember).toBeGreaterThan(0);
});

test('zero days: a replayed wake key is still idempotent, and a just-released hold keeps its claims', async () => {
  const c = await seedCompany(h, 'Zero Days Co');
  h.services.config.TREEWARDEN_RETENTION_DAYS = 0;
  try {
    const agent = await c.agent();
    const issue = await c.issue({ title: 'keyed wake', assigneeAgentId: agent.id, status: 'todo' });
    const wake = () => h.request('POST', `/api/issues/${issue.id}/wake`, c.token, { idempotencyKey: 'nightly-1' });
    expect((await wake()).status).toBe(202);
    const first = await eventually('the keyed run finished', () =>
      h.services.db.run.findFirst({ where: { issueId: issue.id, status: 'succeeded' } }),
    );
    const released = await holdInterruptsRun(h, c, { release: true });
    const hold = await h.services.db.treeHold.findFirstOrThrow({ where: { rootIssueId: released.issueId } });

    const removed = await pass();

    expect(removed.runs).toBeGreaterThan(0);
    // the run is gone, its wake and key are not: the replay names the same wake and starts nothing
    expect(await h.services.db.run.count({ where: { id: first.id } })).toBe(0);
    const replay = await wake();
    // 200, not 202: the key named the existing wake, which is not queued any more
    const keyed = await h.services.db.wakeRequest.findFirstOrThrow({ where: { issueId: issue.id } });
    expect(replay).toMatchObject({ status: 200, body: { id: keyed.id, runId: first.id, outcome: 'not_queued' } });
    expect(await h.services.db.wakeRequest.count({ where: { issueId: issue.id } })).toBe(1);
    expect(await h.services.db.run.count({ where: { issueId: issue.id } })).toBe(0);
    // released minutes ago: its workflow could still retry owed resumes with these claims
    expect(await h.services.db.resumeClaim.count({ where: { holdId: hold.id } })).toBe(1);
    expect(await h.services.db.treeHoldMember.count({ where: { holdId: hold.id } })).toBeGreaterThan(0);
    expect(await h.services.db.run.count({ where: { id: runIdOf(released.stoppedRunWorkflowId) } })).toBe(1);
  } finally {
    h.services.config.TREEWARDEN_RETENTION_DAYS = 30;
  }
});

describe('an owed resume outlives the retention of the hold that stopped its run (issue 44, item 1)', () => {
  type Company = Awaited<ReturnType<typeof seedCompany>>;
  const post = (c: Company, url: string, body: unknown = {}) => h.request('POST', url, c.token, body);
  const resumedRuns = (issueId: string) =>
    h.services.db.run.findMany({ where: { issueId, wakeReason: 'issue_tree_resumed' } });
  /** The hold released (and the run stopped) 40 days ago, past the retention's cutoffs; then a pass. */
  async function ageAndPass(holdId: string, runId: string) {
    await h.services.db.$executeRaw`UPDATE "TreeHold" SET "releasedAt" = "releasedAt" - interval '40 days'
      WHERE id = ${holdId}::uuid`;
    await h.services.db.$executeRaw`UPDATE "Run" SET "finishedAt" = "finishedAt" - interval '40 days',
      "updatedAt" = "updatedAt" - interval '40 days' WHERE id = ${runId}::uuid`;
    return pass();
  }
  async function family(c: Company, adapter: Record<string, unknown>, marker?: string) {
    const agent = await c.agent(adapter);
    const parent = await c.issue({ title: 'owed parent' });
    const child = await c.issue({
      title: 'owed child',
      parentId: parent.id,
      assigneeAgentId: agent.id,
      status: 'in_progress',
    });
    const runId: string = (await post(c, `/api/issues/${child.id}/wake`)).body.runId;
    await eventually('the run at work', async () =>
      marker
        ? existsSync(marker)
        : (await h.services.db.run.findUniqueOrThrow({ where: { id: runId } })).adapterEntered,
    );
    return { parent, child, runId };
  }

  test('overlapping holds: the hold that stopped the run is released first and aged out; the other’s release still resumes it once', async () => {
    const c = await seedCompany(h, 'Overlapping Holds Co');
    // the prepare step blocks only the first run: the resumed one passes straight through
    const marker = `/tmp/tw-owed-${Date.now()}-${Math.random().toString(16).slice(2)}`;
    const prepare = { command: 'sh', args: ['-c', `test -f ${marker} && exit 0; touch ${marker}; sleep 60 & wait`] };
    const { parent, child, runId } = await family(c, { type: 'process', command: 'true', prepare }, marker);
    const childHold = (await post(c, `/api/issues/${child.id}/tree-holds`, { mode: 'pause' })).body;
    const parentHold = (await post(c, `/api/issues/${parent.id}/tree-holds`, { mode: 'pause' })).body;
    expect(['cancelled', 'failed']).toContain((await settled(h, runId)).status);
    // the last hold to stop the run is its stopping hold: its snapshot is the one the resume decision reads
    const stopping = (await h.services.db.run.findUniqueOrThrow({ where: { id: runId } })).stoppedByHoldId;
    const [first, last] = stopping === parentHold.id ? [parent, child] : [child, parent];
    const [firstHold, lastHold] = stopping === parentHold.id ? [parentHold, childHold] : [childHold, parentHold];
    expect(stopping).toBe(firstHold.id);
    expect((await post(c, `/api/issues/${first.id}/tree-holds/${firstHold.id}/release`)).body.resumed).toEqual([]);

    await ageAndPass(firstHold.id, runId);
    expect(await h.services.db.run.count({ where: { id: runId } })).toBe(1);
    const snapshot = { holdId: firstHold.id, interruptedRunId: runId };
    expect(await h.services.db.treeHoldMember.count({ where: snapshot })).toBe(1);

    const released = await post(c, `/api/issues/${last.id}/tree-holds/${lastHold.id}/release`);
    expect(released.body.resumed).toHaveLength(1);
    expect(await resumedRuns(child.id)).toHaveLength(1);
    expect(await h.services.db.resumeClaim.count({ where: { interruptedRunId: runId } })).toBe(1);
  });

  test('an open execution blocker: the released hold is aged out; the blocker’s resolution still resumes the run once', async () => {
    const c = await seedCompany(h, 'Open Blocker Co');
    // stopped mid-command: an unknown outcome, which the release skips and a person reconciles; the resumed run
    // exits at once
    const script = '[ "$TREEWARDEN_WAKE_REASON" = issue_tree_resumed ] && exit 0; sleep 60 & wait';
    const { parent, child, runId } = await family(c, { type: 'process', command: 'sh', args: ['-c', script] });
    const hold = (await post(c, `/api/issues/${parent.id}/tree-holds`, { mode: 'pause' })).body;
    expect(['cancelled', 'failed']).toContain((await settled(h, runId)).status);
    const released = await post(c, `/api/issues/${parent.id}/tree-holds/${hold.id}/release`);
    expect(released.body.skipped).toEqual([{ issueId: child.id, reason: 'execution_blocker' }]);

    await ageAndPass(hold.id, runId);
    expect(await h.services.db.treeHoldMember.count({ where: { holdId: hold.id, interruptedRunId: runId } })).toBe(1);

    const blocker = await h.services.db.executionBlocker.findFirstOrThrow({ where: { runId, status: 'active' } });
    const resolved = await post(c, `/api/execution-blockers/${blocker.id}/resolve`, {
      resolution: 'no_external_effects',
    });
    expect(resolved.status).toBe(200);
    await eventually('the resume after the resolution', async () => (await resumedRuns(child.id)).length > 0);
    await h.services.client.workflow.getHandle(workflowId.blockerResolution(blocker.id)).result();
    expect(await resumedRuns(child.id)).toHaveLength(1);
    expect(await h.services.db.resumeClaim.count({ where: { interruptedRunId: runId } })).toBe(1);
  });
});
