/**
 * @module Pausing live work (issue 14): agents really running a shell command when their tree is
 * paused. One that checkpoints on SIGTERM is `preserved` and resumes exactly once with its
 * checkpoint; one that does not is blocked visibly until a person reconciles it, and then resumes
 * exactly once through the same claim table.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { workflowId } from '../domain/ids';
import { runFiles } from '../runs/run-files';
import { watchdogStateQuery } from '../workflows/definitions';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

/** The resumed run prints the context it was given (through TREEWARDEN_CONTEXT_FILE) and exits 0. */
const RESUMED_PRINTS_CONTEXT =
  'if [ "$TREEWARDEN_WAKE_REASON" = issue_tree_resumed ]; then cat "$TREEWARDEN_CONTEXT_FILE"; exit 0; fi; ';
/** testing-like-users.md §3: a resumable agent, mid-`sleep`, writes its checkpoint on SIGTERM and exits. */
const CHECKPOINTS =
  RESUMED_PRINTS_CONTEXT +
  `trap 'printf "{\\"resumable\\":true,\\"session\\":\\"s-%s\\"}" "$TREEWARDEN_RUN_ID" > "$TREEWARDEN_CHECKPOINT_FILE"; exit 0' TERM; ` +
  'echo up >> "$TREEWARDEN_JOURNAL_FILE"; sleep 600 & wait';
/** Mid-`sleep` without a checkpoint: SIGTERM ends it, its outcome is unknown. */
const NO_CHECKPOINT = RESUMED_PRINTS_CONTEXT + 'echo up >> "$TREEWARDEN_JOURNAL_FILE"; sleep 600 & wait';
/** Checkpoints on SIGTERM, but a child that left the group with setsid and ignores SIGTERM survives it. */
const CHECKPOINTS_WITH_SETSID_SURVIVOR =
  RESUMED_PRINTS_CONTEXT +
  `setsid sh -c 'trap "" TERM; sleep 600' & ` +
  // it waits for its children after the checkpoint: in the sandbox, an agent that exits takes what it left with it
  `trap 'printf "{\\"resumable\\":true}" > "$TREEWARDEN_CHECKPOINT_FILE"; wait; exit 0' TERM; ` +
  'echo up >> "$TREEWARDEN_JOURNAL_FILE"; sleep 600 & wait';

async function family(script: string) {
  const c = await seedCompany(h);
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', script] });
  const parent = await c.issue({ title: 'parent' });
  const child = await c.issue({
    title: 'child',
    parentId: parent.id,
    assigneeAgentId: agent.id,
    status: 'in_progress',
  });
  return { c, agent, parent, child };
}

const runsOf = (issueId: string) => h.services.db.run.findMany({ where: { issueId }, orderBy: { createdAt: 'asc' } });
const resumedRuns = async (issueId: string) =>
  (await runsOf(issueId)).filter((r) => r.wakeReason === 'issue_tree_resumed');

/** Wakes the issue and waits until its agent is mid-command (in its adapter, traps installed). */
async function wakeMidCommand(token: string, issueId: string) {
  const wake = await h.request('POST', `/api/issues/${issueId}/wake`, token, {});
  expect(wake.status).toBe(202);
  const runId: string = wake.body.runId;
  await eventually('the agent is mid-command', async () => {
    const run = await h.services.db.run.findUniqueOrThrow({ where: { id: runId } });
    return run.adapterEntered && existsSync(runFiles(runId, null).journal);
  });
  return runId;
}

/** A family whose child was paused mid-command: its run has settled (its stop verified) under the hold. */
async function pausedMidCommand(script: string) {
  const f = await family(script);
  const runId = await wakeMidCommand(f.c.token, f.child.id);
  const hold = await pause(f.c.token, f.parent.id);
  await settled(runId);
  return { ...f, runId, hold };
}

async function pause(token: string, issueId: string) {
  const r = await h.request('POST', `/api/issues/${issueId}/tree-holds`, token, { mode: 'pause' });
  expect(r.status).toBe(201);
  return r.body as { id: string };
}

const release = (token: string, issueId: string, holdId: string, body: unknown = {}) =>
  h.request('POST', `/api/issues/${issueId}/tree-holds/${holdId}/release`, token, body);
const resolve = (token: string, blockerId: string, body: unknown) =>
  h.request('POST', `/api/execution-blockers/${blockerId}/resolve`, token, body);

const settled = (runId: string) =>
  eventually(
    `run ${runId} settled`,
    async () => {
      const run = await h.services.db.run.findUniqueOrThrow({ where: { id: runId } });
      return ['succeeded', 'failed', 'cancelled'].includes(run.status) ? run : null;
    },
    60_000,
  );

/** What the resumed agent read from its TREEWARDEN_CONTEXT_FILE (it printed it to its output). */
const contextSeenBy = (runId: string) =>
  JSON.parse(readFileSync(runFiles(runId, null).output, 'utf8')) as Record<string, unknown>;

async function theOnlyResume(issueId: string) {
  const [resumed] = await eventually('the resumed run', async () => {
    const runs = await resumedRuns(issueId);
    return runs.length > 0 ? runs : null;
  });
  expect(await settled(resumed.id)).toMatchObject({ status: 'succeeded' });
  expect(await resumedRuns(issueId)).toHaveLength(1);
  return resumed;
}

test('a running agent that checkpoints on SIGTERM is preserved and resumes exactly once with its checkpoint; a second release is 409', async () => {
  const { c, parent, child } = await family(CHECKPOINTS);
  const runId = await wakeMidCommand(c.token, child.id);
  const hold = await pause(c.token, parent.id);
  const stopped = await settled(runId);
  expect(stopped).toMatchObject({ status: 'cancelled', stopKind: 'operator_hold', adapterEntered: true });
  const run = await h.request('GET', `/api/runs/${runId}`, c.token);
  expect(run.body).toMatchObject({
    stopOutcome: 'preserved',
    stopResult: {
      verdict: 'terminal-clean',
      outcome: 'preserved',
      checkpoint: { resumable: true, session: `s-${runId}` },
    },
    executionBlocker: null,
  });
  expect(run.body.stopResult.attempts).toHaveLength(1); // SIGTERM sufficed: no SIGKILL
  expect((await h.request('GET', `/api/issues/${child.id}`, c.token)).body.executionBlockers).toEqual([]);
  expect(await resumedRuns(child.id)).toHaveLength(0); // nothing runs while held

  const first = await release(c.token, parent.id, hold.id);
  expect(first.status).toBe(200);
  expect(first.body.skipped).toEqual([]);
  expect(first.body.resumed).toEqual([{ issueId: child.id, runId: expect.any(String) }]);
  const resumed = await theOnlyResume(child.id);
  const directive = {
    holdId: hold.id,
    interruptedRunId: runId,
    checkpoint: { resumable: true, session: `s-${runId}` },
  };
  // plus its recovery capsule (test/capsules.test.ts)
  const capsule = expect.objectContaining({
    kind: 'resume_after_hold',
    previousRun: expect.objectContaining({ runId }),
  });
  // server-written, apart from the waker's (empty) context
  const row = await h.services.db.run.findUniqueOrThrow({ where: { id: resumed.id } });
  expect(row.directive).toEqual({ ...directive, capsule });
  expect(row.context).toEqual({});
  expect(contextSeenBy(resumed.id)).toEqual({ ...directive, capsule });

  expect((await release(c.token, parent.id, hold.id)).status).toBe(409);
  expect(await resumedRuns(child.id)).toHaveLength(1);
});

test('twenty concurrent releases of a hold over a checkpointing run: one 200 and one resume', async () => {
  const { c, parent, child, hold } = await pausedMidCommand(CHECKPOINTS);
  const results = await Promise.all(Array.from({ length: 20 }, () => release(c.token, parent.id, hold.id)));
  expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(19).fill(409)]);
  await theOnlyResume(child.id);
});

test('overlapping child and parent holds over a checkpointing run: the resume waits for the last release', async () => {
  const { c, parent, child } = await family(CHECKPOINTS);
  const runId = await wakeMidCommand(c.token, child.id);
  const childHold = await pause(c.token, child.id);
  const parentHold = await pause(c.token, parent.id);
  await settled(runId);
  const r1 = await release(c.token, child.id, childHold.id);
  expect(r1.status).toBe(200);
  expect(r1.body.resumed).toEqual([]);
  expect(await resumedRuns(child.id)).toHaveLength(0);
  const r2 = await release(c.token, parent.id, parentHold.id);
  expect(r2.body.resumed).toHaveLength(1);
  const resumed = await theOnlyResume(child.id);
  expect(contextSeenBy(resumed.id)).toMatchObject({
    holdId: parentHold.id,
    interruptedRunId: runId,
    checkpoint: { resumable: true },
  });
});

test('a running agent without a checkpoint: skipped on release, its blocker visible everywhere; resolving gives exactly one resume, a second resolve is 409', async () => {
  const { c, parent, child, runId, hold } = await pausedMidCommand(NO_CHECKPOINT);
  const other = await seedCompany(h);

  const released = await release(c.token, parent.id, hold.id);
  expect(released.status).toBe(200);
  expect(released.body.skipped).toEqual([{ issueId: child.id, reason: 'execution_blocker' }]);
  expect(released.body.resumed).toEqual([]);

  const issue = await h.request('GET', `/api/issues/${child.id}`, c.token);
  expect(issue.body.executionBlockers).toEqual([
    {
      id: expect.any(String),
      runId,
      cause: 'stopped_mid_turn_unknown_outcome',
      nextAction: expect.stringContaining('treewarden reconcile'),
      status: 'active',
      createdAt: expect.any(String),
      resolvedAt: null,
      resolution: null,
      note: null,
    },
  ]);
  const blocker = issue.body.executionBlockers[0];
  expect(blocker.nextAction).toContain(runId);
  expect(blocker.nextAction).toContain('missing'); // why: no checkpoint was written
  expect((await h.request('GET', `/api/issues/${child.id}/execution-blockers`, c.token)).body.items).toEqual([blocker]);
  const run = await h.request('GET', `/api/runs/${runId}`, c.token);
  expect(run.body).toMatchObject({
    stopOutcome: 'unknown_outcome',
    stopResult: { outcomeReason: 'missing' },
    executionBlocker: blocker,
  });
  expect((await h.request('GET', `/api/work/${runId}/inspect`, c.token)).body.executionBlocker).toEqual(blocker);
  const heldMember = (await h.request('GET', `/api/tree-holds/${hold.id}`, c.token)).body.members.find(
    (m: { issueId: string }) => m.issueId === child.id,
  );
  expect(heldMember.executionBlocker).toEqual(blocker);

  // board only (run tokens: next test): another company 404, a bad body 400; none of them resolves it
  expect((await resolve(other.token, blocker.id, { resolution: 'no_external_effects' })).status).toBe(404);
  const bad = await resolve(c.token, blocker.id, { resolution: 'looks_fine' });
  expect(bad.status).toBe(400);
  expect(bad.body.error.message).toContain('resolution');
  expect((await resolve(c.token, blocker.id, { resolution: 'effects_reviewed', extra: 1 })).status).toBe(400);
  expect((await resolve(c.token, 'nope', { resolution: 'effects_reviewed' })).status).toBe(400);
  expect(await resumedRuns(child.id)).toHaveLength(0);
  expect((await h.services.db.executionBlocker.findUniqueOrThrow({ where: { id: blocker.id } })).status).toBe('active');

  const resolved = await resolve(c.token, blocker.id, { resolution: 'no_external_effects', note: 'it only slept' });
  expect(resolved.status).toBe(200);
  expect(resolved.body).toMatchObject({
    id: blocker.id,
    status: 'resolved',
    resolution: 'no_external_effects',
    note: 'it only slept',
    resolvedAt: expect.any(String),
  });
  expect(
    await h.services.db.activityLog.count({ where: { action: 'execution_blocker.resolved', entityId: child.id } }),
  ).toBe(1);
  const resumed = await theOnlyResume(child.id);
  expect(contextSeenBy(resumed.id)).toEqual({
    holdId: hold.id,
    interruptedRunId: runId,
    checkpoint: null,
    reconciliation: { blockerId: blocker.id, resolution: 'no_external_effects' },
    capsule: expect.objectContaining({
      kind: 'resume_after_reconciliation',
      previousRun: expect.objectContaining({ runId }),
    }),
  });

  const again = await resolve(c.token, blocker.id, { resolution: 'effects_reviewed' });
  expect(again.status).toBe(409);
  expect(await h.services.db.executionBlocker.findUniqueOrThrow({ where: { id: blocker.id } })).toMatchObject({
    resolution: 'no_external_effects',
  });
  expect(await resumedRuns(child.id)).toHaveLength(1);
});

test('a running agent cannot resolve a blocker with its run token (403), even in its own company', async () => {
  const { c, parent, child, runId, hold } = await pausedMidCommand(NO_CHECKPOINT);
  await release(c.token, parent.id, hold.id);
  const blocker = await h.services.db.executionBlocker.findFirstOrThrow({ where: { runId } });
  // another agent of the company, really running, tries with its own TREEWARDEN_RUN_TOKEN
  const tries =
    'curl -s -o /dev/null -w "%{http_code}" -X POST -H "authorization: Bearer $TREEWARDEN_RUN_TOKEN" -H "content-type: application/json" ' +
    `-d '{"resolution":"no_external_effects"}' "$TREEWARDEN_API_URL/api/execution-blockers/${blocker.id}/resolve" > "$TREEWARDEN_JOURNAL_FILE"`;
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', tries] });
  const issue = await c.issue({ title: 'sibling', assigneeAgentId: agent.id });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  expect(await settled(wake.body.runId)).toMatchObject({ status: 'succeeded' });
  expect(readFileSync(runFiles(wake.body.runId, null).journal, 'utf8')).toBe('403');
  expect((await h.services.db.executionBlocker.findUniqueOrThrow({ where: { id: blocker.id } })).status).toBe('active');
  expect(await resumedRuns(child.id)).toHaveLength(0);
});

test('a resolve while another hold still covers the task: no resume until that hold is released, then one', async () => {
  const { c, parent, child, runId, hold: first } = await pausedMidCommand(NO_CHECKPOINT);
  expect((await release(c.token, parent.id, first.id)).body.skipped).toEqual([
    { issueId: child.id, reason: 'execution_blocker' },
  ]);
  const second = await pause(c.token, parent.id);
  const blocker = await h.services.db.executionBlocker.findFirstOrThrow({ where: { runId } });
  expect((await resolve(c.token, blocker.id, { resolution: 'effects_reviewed' })).status).toBe(200);
  // the dispatch ran and found the task still held: it claimed nothing
  await eventually(
    'the resolution workflow finished',
    async () =>
      (await h.services.client.workflow.getHandle(`execution-blocker:${blocker.id}`).describe()).status.name ===
      'COMPLETED',
  );
  expect(await resumedRuns(child.id)).toHaveLength(0);
  expect(await h.services.db.resumeClaim.count({ where: { interruptedRunId: runId } })).toBe(0);
  const r = await release(c.token, parent.id, second.id);
  expect(r.body.resumed).toEqual([{ issueId: child.id, runId: expect.any(String) }]);
  const resumed = await theOnlyResume(child.id);
  expect(contextSeenBy(resumed.id)).toMatchObject({
    holdId: second.id,
    interruptedRunId: runId,
    reconciliation: { blockerId: blocker.id },
  });
});

test('wakeAgents with an unreconciled member is 409 reconciliation_required naming it, and the hold stays active', async () => {
  const { c, parent, child, runId, hold } = await pausedMidCommand(NO_CHECKPOINT);
  const blocker = await h.services.db.executionBlocker.findFirstOrThrow({ where: { runId } });
  const refused = await release(c.token, parent.id, hold.id, { wakeAgents: true });
  expect(refused.status).toBe(409);
  expect(refused.body.error).toMatchObject({
    code: 'reconciliation_required',
    details: [{ issueId: child.id, runId, blockerId: blocker.id }],
  });
  const viaResume = await h.request('POST', `/api/issues/${parent.id}/tree-holds`, c.token, {
    mode: 'resume',
    wakeAgents: true,
  });
  expect(viaResume.status).toBe(409);
  expect(viaResume.body.error.code).toBe('reconciliation_required');
  expect((await h.request('GET', `/api/tree-holds/${hold.id}`, c.token)).body.status).toBe('active');
  expect(await runsOf(child.id)).toHaveLength(1);

  const plain = await release(c.token, parent.id, hold.id);
  expect(plain.status).toBe(200);
  expect(plain.body.skipped).toEqual([{ issueId: child.id, reason: 'execution_blocker' }]);
});

test('a checkpoint written while a setsid child survives SIGTERM: stop-partial, a blocker, no resume', async () => {
  const { c, parent, child, runId, hold } = await pausedMidCommand(CHECKPOINTS_WITH_SETSID_SURVIVOR);
  expect(existsSync(runFiles(runId, null).checkpoint)).toBe(true); // the agent did write one
  const run = await h.request('GET', `/api/runs/${runId}`, c.token);
  expect(run.body.stopResult.attempts[0]).toMatchObject({ signal: 'SIGTERM', verdict: 'stop-partial' });
  expect(run.body).toMatchObject({
    stopOutcome: 'unknown_outcome',
    stopResult: { outcomeReason: 'stop_partial' },
    executionBlocker: { status: 'active' },
  });
  const released = await release(c.token, parent.id, hold.id);
  expect(released.body.skipped).toEqual([{ issueId: child.id, reason: 'execution_blocker' }]);
  expect(await resumedRuns(child.id)).toHaveLength(0);
});

test("treewarden reconcile <runId> resolves the run's blocker through the API and the task resumes once", async () => {
  const { c, parent, child, runId, hold } = await pausedMidCommand(NO_CHECKPOINT);
  await release(c.token, parent.id, hold.id);
  const cli = await new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
    execFile(
      process.execPath,
      [
        'node_modules/.bin/tsx',
        'cli/index.ts',
        'reconcile',
        runId,
        '--resolution',
        'effects_reviewed',
        '--note',
        'reviewed the log',
        '--json',
      ],
      {
        cwd: path.join(__dirname, '..'),
        env: { ...process.env, TREEWARDEN_API_URL: h.apiUrl, TREEWARDEN_TOKEN: c.token },
        timeout: 60_000,
      },
      (error, stdout, stderr) => done({ code: error ? Number(error.code) : 0, stdout, stderr }),
    ),
  );
  expect(cli).toMatchObject({ code: 0 });
  expect(JSON.parse(cli.stdout)).toMatchObject({
    runId,
    status: 'resolved',
    resolution: 'effects_reviewed',
    note: 'reviewed the log',
  });
  await theOnlyResume(child.id);
});

test('a stranded subtree wakes its watchdog once for the stop with the blocker; resolving re-arms it', async () => {
  const c = await seedCompany(h);
  const watcher = await c.agent();
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', NO_CHECKPOINT] });
  const root = await c.issue({ title: 'watched' });
  const parent = await c.issue({ title: 'paused part', parentId: root.id });
  const child = await c.issue({
    title: 'child',
    parentId: parent.id,
    assigneeAgentId: agent.id,
    status: 'in_progress',
  });
  const watchdog = (await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id }))
    .body as { id: string };
  const wakes = () =>
    h.services.db.wakeRequest.findMany({
      where: { idempotencyKey: { startsWith: `task_watchdog:${watchdog.id}:` } },
      orderBy: { createdAt: 'asc' },
    });
  const childLeafOf = (wake: { directive: unknown }) =>
    (
      wake.directive as { taskWatchdog: { stoppedLeaves: { id: string; executionBlockerIds: string[] }[] } }
    ).taskWatchdog.stoppedLeaves.find((l) => l.id === child.id);

  const runId = await wakeMidCommand(c.token, child.id);
  const hold = await pause(c.token, parent.id);
  await settled(runId);
  const blocker = await h.services.db.executionBlocker.findFirstOrThrow({ where: { runId } });
  const [stranded] = await eventually('the watchdog woke for the stranded subtree', async () => {
    const found = await wakes();
    return found.length > 0 ? found : null;
  });
  expect(childLeafOf(stranded)?.executionBlockerIds).toEqual([blocker.id]);
  const watchdogRun = h.services.client.workflow.getHandle(workflowId.taskWatchdog(root.id));
  const beforeRelease = await watchdogRun.query(watchdogStateQuery);
  expect((await release(c.token, parent.id, hold.id)).body.skipped).toEqual([
    { issueId: child.id, reason: 'execution_blocker' },
  ]);
  // the release signalled the watchdog before answering: once that change is evaluated, one wake proves it immaterial
  await eventually('the release evaluated', async () => {
    const state = await watchdogRun.query(watchdogStateQuery);
    const evaluating = (await watchdogRun.describe()).raw.pendingActivities?.length;
    return state.changesReceived > beforeRelease.changesReceived && state.pendingChanges === 0 && !evaluating;
  });
  expect(await wakes()).toHaveLength(1);

  expect((await resolve(c.token, blocker.id, { resolution: 'no_external_effects' })).status).toBe(200);
  await theOnlyResume(child.id);
  const all = await eventually('the watchdog re-armed by the resolution', async () => {
    const found = await wakes();
    return found.length > 1 ? found : null;
  });
  expect(all).toHaveLength(2);
  expect(childLeafOf(all[1])?.executionBlockerIds).toEqual([]);
});
