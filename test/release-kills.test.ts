/**
 * @module Worker processes killed with SIGKILL while a release or a reconciliation dispatches resumes lose nothing:
 * a release fan-out killed at random points still gives every owed resume exactly once, and a resolved execution
 * blocker's resume is dispatched exactly once though its worker died mid-dispatch. (Split from
 * test/worker-kills.test.ts, whose harness it shares through test/support/kill-trials.ts, to keep each file within
 * its three minutes when two files run at once.)
 */
import { existsSync } from 'node:fs';
import { workflowId } from '../domain/ids';
import { runFiles } from '../runs/run-files';
import { eventually, seedCompany, type Harness } from '../testing/harness';
import { startKillFleet, trialsUntilLanded, type KillFleet } from './support/kill-trials';
import { expectResumedExactlyOnce, pausedFamily } from './support/paused-family';
import { seededRandom } from './support/seeded-random';

let kills: KillFleet;
let h: Harness;
beforeAll(async () => {
  kills = await startKillFleet();
  ({ h } = kills);
});
afterAll(async () => {
  await kills?.close();
});

test('a worker killed at random points of a release fan-out: every owed resume exactly once (5 kills that land)', async () => {
  const random = seededRandom(7);
  const c = await seedCompany(h);
  // a miss (the fan-out ended before the random delay, as under a lighter load) halves the delay's range
  let maxDelayMs = 150;
  const landed = await trialsUntilLanded(5, 15, async () => {
    const { parent, holdId, interrupted, childIds } = await pausedFamily(h, c, 4);

    let answered = false;
    const releasing = h
      .request('POST', `/api/issues/${parent.id}/tree-holds/${holdId}/release`, c.token, {})
      .finally(() => (answered = true));
    const inFlight = await kills.killMidActivity(
      workflowId.treeHold(holdId),
      'releaseHold',
      Math.floor(random() * maxDelayMs),
      () => answered,
    );
    if (!inFlight) maxDelayMs /= 2;
    await expectResumedExactlyOnce(h, await releasing, { childIds, interrupted });
    await kills.fleetRestored();
    return inFlight;
  });
  // the kills must have hit the fan-out itself, or the trials prove little
  expect(landed).toBe(5);
}, 900_000);

test("a worker killed while dispatching a resolved blocker's resume: still exactly one resume (a kill that lands)", async () => {
  const random = seededRandom(11);
  const c = await seedCompany(h);
  // mid-`sleep` without a checkpoint (unknown outcome); the resumed run exits at once
  const agent = await c.agent({
    type: 'process',
    command: 'sh',
    args: [
      '-c',
      '[ "$TREEWARDEN_WAKE_REASON" = issue_tree_resumed ] && exit 0; echo up >> "$TREEWARDEN_JOURNAL_FILE"; sleep 600 & wait',
    ],
  });
  const landed = await trialsUntilLanded(1, 8, async (trial) => {
    const parent = await c.issue({ title: `stranded ${trial}` });
    const child = await c.issue({
      title: `child ${trial}`,
      parentId: parent.id,
      assigneeAgentId: agent.id,
      status: 'in_progress',
    });
    const runId: string = (await h.request('POST', `/api/issues/${child.id}/wake`, c.token, {})).body.runId;
    await eventually('the agent is mid-command', async () => existsSync(runFiles(runId, null).journal), 60_000);
    const hold = await h.request('POST', `/api/issues/${parent.id}/tree-holds`, c.token, { mode: 'pause' });
    await eventually(
      'the stop verified',
      async () => (await h.services.db.run.findUniqueOrThrow({ where: { id: runId } })).status === 'cancelled',
      60_000,
    );
    expect(
      (await h.request('POST', `/api/issues/${parent.id}/tree-holds/${hold.body.id}/release`, c.token, {})).body
        .skipped,
    ).toEqual([{ issueId: child.id, reason: 'execution_blocker' }]);
    const blocker = await h.services.db.executionBlocker.findFirstOrThrow({ where: { runId } });

    let dispatched = false;
    const resumedRuns = () =>
      h.services.db.run.findMany({ where: { issueId: child.id, wakeReason: 'issue_tree_resumed' } });
    const resolving = h.request('POST', `/api/execution-blockers/${blocker.id}/resolve`, c.token, {
      resolution: 'no_external_effects',
    });
    const watching = eventually('the resume', async () => (dispatched = (await resumedRuns()).length > 0), 120_000);
    const inFlight = await kills.killMidActivity(
      workflowId.blockerResolution(blocker.id),
      'resumeAfterResolution',
      Math.floor(random() * 40),
      () => dispatched,
    );
    expect((await resolving).status).toBe(200);
    await watching;
    await eventually(
      'the resolution workflow completed',
      async () =>
        (await h.services.client.workflow.getHandle(workflowId.blockerResolution(blocker.id)).describe()).status
          .name === 'COMPLETED',
      120_000,
    );
    expect(await resumedRuns()).toHaveLength(1);
    expect(await h.services.db.resumeClaim.count({ where: { interruptedRunId: runId } })).toBe(1);
    await kills.fleetRestored();
    return inFlight;
  });
  // the dispatch is short: some kills land after it finished, but one must land inside it
  expect(landed).toBe(1);
}, 900_000);
