/**
 * @module Task watchdog: one workflow per watched issue wakes its agent exactly once per new
 * stop fingerprint, ignores bookkeeping writes, and holds its runs to the authority contract.
 */
import { readFileSync } from 'node:fs';
import { workflowId } from '../domain/ids';
import type { Classification, StoppedLeaf } from '../domain/watchdog';
import { triggerReview } from '../watchdogs/review-wake';
import { putWatchdog as putWatchdogRow, removeWatchdog } from '../watchdogs/configuration';
import { recoverWorkflows, recoverWorkflowsOncePerFleet } from '../workers/create-worker';
import { subtreeChangedSignal, watchdogStateQuery } from '../workflows/definitions';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { BLOCKED } from './support/blocked';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1' });
});
afterAll(async () => {
  await h?.close();
});

/** What seed 000 ("What the watchdog agent does") says the default mandate tells the agent, point by point. */
const SEED_000_MANDATE = [
  /every stopped leaf as a claim/i,
  /"I could not" or "waiting for approval" is not automatically valid/,
  /genuinely complete leaves alone, with a short note/i,
  /reopen it, reassign it, comment actionable instructions, create a follow-up child inside the watched subtree/,
  /resolve an interaction the ordinary audience permits/,
  /names the unblock owner and the next action/,
  /inside the watched subtree/,
  /never impersonate formal approvals, accept spend or hiring decisions/,
  /use an interaction response as downstream authority/,
  /bypass execution-policy stages/,
  /never create another watchdog, never wake yourself/i,
  /narrow this mandate or veto shortcuts, never widen it/,
];

const watchdogWakes = (watchdogId: string) =>
  h.services.db.wakeRequest.findMany({
    where: { reason: 'task_watchdog_stopped_subtree', idempotencyKey: { startsWith: `task_watchdog:${watchdogId}:` } },
  });

/** The watchdog's first review wake, once it is the only one. */
const firstWake = async (watchdogId: string) =>
  (
    await eventually('wake', async () => {
      const wakes = await watchdogWakes(watchdogId);
      return wakes.length === 1 ? wakes : null;
    })
  )[0];

/** A stale evaluation's classification: the stop a wake was made for (its stopped leaves), under `fingerprint`. */
function staleStop(wake: { directive: unknown }, fingerprint: string): Classification {
  const stale = (wake.directive as { taskWatchdog: { stoppedLeaves: StoppedLeaf[] } }).taskWatchdog;
  return { fingerprint, stoppedLeaves: stale.stoppedLeaves } as Classification;
}

async function watchedTree() {
  const c = await seedCompany(h);
  const worker = await c.agent();
  const watcher = await c.agent();
  const root = await c.issue({ title: 'ship feature' });
  const leaf = await c.issue({ title: 'write code', parentId: root.id, status: 'done' });
  return { c, worker, watcher, root, leaf };
}

async function putWatchdog(c: { token: string }, issueId: string, agentId: string, instructions?: string) {
  const r = await h.request('PUT', `/api/issues/${issueId}/watchdog`, c.token, { agentId, instructions });
  expect([200, 201]).toContain(r.status);
  return r.body;
}

/** A change signal straight to the watchdog's workflow: an evaluation without a recorded change. */
async function nudge(issueId: string, watchdogId: string) {
  await h.services.client.workflow
    .getHandle(workflowId.taskWatchdog(issueId))
    .signal(subtreeChangedSignal, { watchdogId, reason: 'nudge' });
}

async function watchdogState(issueId: string) {
  return h.services.client.workflow.getHandle(workflowId.taskWatchdog(issueId)).query(watchdogStateQuery);
}

describe('configuration', () => {
  test('PUT upserts with trimmed instructions, GET shows it, DELETE disables and GET is null', async () => {
    const { c, watcher, root } = await watchedTree();
    const created = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, {
      agentId: watcher.id,
      instructions: '  check CI  ',
    });
    expect(created.status).toBe(201);
    expect(created.body.instructions).toBe('check CI');
    const emptied = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, {
      agentId: watcher.id,
      instructions: '   ',
    });
    expect(emptied.body.instructions).toBeNull();
    const got = await h.request('GET', `/api/issues/${root.id}/watchdog`, c.token);
    expect(got.body).toMatchObject({ id: created.body.id, agentId: watcher.id, status: 'active' });
    expect((await h.request('DELETE', `/api/issues/${root.id}/watchdog`, c.token)).status).toBe(200);
    expect((await h.request('GET', `/api/issues/${root.id}/watchdog`, c.token)).body).toBeNull();
    const audit = await h.services.db.activityLog.findMany({
      where: { entityId: root.id, action: { startsWith: 'issue.watchdog_' } },
      orderBy: { createdAt: 'asc' },
    });
    expect(audit.map((a) => [a.action, a.actorKind])).toEqual([
      ['issue.watchdog_created', 'board'],
      ['issue.watchdog_updated', 'board'],
      ['issue.watchdog_removed', 'board'],
    ]);
    expect(await h.services.db.watchdog.count({ where: { issueId: root.id } })).toBe(1);
  });

  test('a dozen racing first PUTs leave exactly one active watchdog', async () => {
    const { c, watcher, root } = await watchedTree();
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id }),
      ),
    );
    expect(results.every((r) => r.status === 200 || r.status === 201)).toBe(true);
    expect(await h.services.db.watchdog.count({ where: { issueId: root.id, status: 'active' } })).toBe(1);
  });

  test('refusals write nothing: foreign agent 404, paused agent 409, review issue 422', async () => {
    const { c, root } = await watchedTree();
    const other = await seedCompany(h, 'Other');
    const foreign = await other.agent();
    const paused = await c.agent({ type: 'noop' }, { status: 'paused' });
    const r404 = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: foreign.id });
    expect(r404.status).toBe(404);
    const r409 = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: paused.id });
    expect(r409.status).toBe(409);
    expect(r409.body.error.message).toBe('Cannot assign watchdog to an agent that is not invokable');
    const review = await h.services.db.issue.create({
      data: {
        companyId: c.companyId,
        parentId: root.id,
        title: 'review',
        originKind: 'task_watchdog',
        originId: root.id,
      },
    });
    const active = await c.agent();
    const r422 = await h.request('PUT', `/api/issues/${review.id}/watchdog`, c.token, { agentId: active.id });
    expect(r422.status).toBe(422);
    expect(r422.body.error.message).toContain('task_watchdog');
    expect(await h.services.db.watchdog.count({ where: { companyId: c.companyId } })).toBe(0);
    const bad = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: 'x' });
    expect(bad.status).toBe(400);
  });

  test('issue creation accepts a watchdog', async () => {
    const c = await seedCompany(h);
    const watcher = await c.agent();
    const issue = await c.issue({
      title: 'watched at birth',
      watchdog: { agentId: watcher.id, instructions: 'look closely' },
    });
    const got = await h.request('GET', `/api/issues/${issue.id}/watchdog`, c.token);
    expect(got.body).toMatchObject({ agentId: watcher.id, instructions: 'look closely' });
  });
});

describe('evaluation', () => {
  test('a stopped subtree gets one review task and one wake per fingerprint; bookkeeping does not re-arm', async () => {
    const { c, watcher, root, leaf } = await watchedTree();
    const watchdog = await putWatchdog(c, root.id, watcher.id);
    const wakes = await eventually('the first watchdog wake', async () => {
      const found = await watchdogWakes(watchdog.id);
      return found.length > 0 ? found : null;
    });
    expect(wakes).toHaveLength(1);
    const review = await h.services.db.issue.findFirstOrThrow({
      where: { originKind: 'task_watchdog', originId: root.id },
    });
    expect(review).toMatchObject({ parentId: root.id, assigneeAgentId: watcher.id });
    const directive = wakes[0].directive as {
      taskWatchdog: {
        fingerprint: string;
        stoppedLeaves: { id: string }[];
        mandate: string;
        capabilities: { watchedRootIssueId: string };
      };
    };
    expect(directive.taskWatchdog.stoppedLeaves.map((l) => l.id)).toEqual([leaf.id]);
    expect(directive.taskWatchdog.capabilities.watchedRootIssueId).toBe(root.id);
    // each point of seed 000's default mandate, in its own words
    for (const point of SEED_000_MANDATE) expect(directive.taskWatchdog.mandate).toMatch(point);
    expect(wakes[0]).toMatchObject({
      reviewWatchdogId: watchdog.id,
      reviewFingerprint: directive.taskWatchdog.fingerprint,
    });

    // timestamps-only writes: comments and a no-op PATCH record no change (test/change-outbox.test.ts); evaluated
    // anyway (a direct signal), they leave the fingerprint as it was
    const before = await watchdogState(root.id);
    await h.request('POST', `/api/issues/${leaf.id}/comments`, c.token, { body: 'just a note' });
    await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, { status: 'done' });
    await nudge(root.id, watchdog.id);
    await eventually(
      'evaluations after the bookkeeping writes',
      async () => (await watchdogState(root.id)).evaluations > before.evaluations,
    );
    expect(await watchdogWakes(watchdog.id)).toHaveLength(1);
    expect(await h.services.db.issue.count({ where: { originKind: 'task_watchdog', originId: root.id } })).toBe(1);
    const triggered = await h.services.db.activityLog.count({
      where: { action: 'issue.task_watchdog_triggered', entityId: root.id },
    });
    expect(triggered).toBe(1);

    // a material change (leaf reopened then blocked) is a new fingerprint: one more wake
    await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, BLOCKED);
    await eventually('a second wake for the new stop', async () => (await watchdogWakes(watchdog.id)).length === 2);
    const state = await watchdogState(root.id);
    expect(state.lastEvaluation?.state).toBe('stopped');
  });

  test('review disposition records the reviewed fingerprint; the same stop is then already_reviewed', async () => {
    const { c, watcher, root } = await watchedTree();
    const watchdog = await putWatchdog(c, root.id, watcher.id);
    await eventually('wake', async () => (await watchdogWakes(watchdog.id)).length === 1);
    const review = await h.services.db.issue.findFirstOrThrow({
      where: { originKind: 'task_watchdog', originId: root.id },
    });
    await eventually(
      'review run to finish',
      async () => (await h.services.db.run.count({ where: { issueId: review.id, status: 'succeeded' } })) === 1,
    );
    const disposition = await h.request('PATCH', `/api/issues/${review.id}`, c.token, { status: 'done' });
    expect(disposition.status).toBe(200);
    const row = await eventually('reviewed fingerprint', async () => {
      const w = await h.services.db.watchdog.findUniqueOrThrow({ where: { id: watchdog.id } });
      return w.lastReviewedFingerprint ? w : null;
    });
    expect(row.lastReviewedFingerprint).toBe(row.lastObservedFingerprint);
    await eventually(
      'already_reviewed',
      async () => (await watchdogState(root.id)).lastEvaluation?.state === 'already_reviewed',
    );
    expect(await watchdogWakes(watchdog.id)).toHaveLength(1);
  });

  test('an evaluation that read the subtree before a disposition committed does not reopen the review task', async () => {
    const { c, watcher, root } = await watchedTree();
    const watchdog = await putWatchdog(c, root.id, watcher.id);
    const wake = await firstWake(watchdog.id);
    await eventually('review run to finish', async () =>
      (await h.services.db.run.count({ where: { wakeRequestId: wake.id, status: 'succeeded' } })) === 1 ? true : null,
    );
    const disposition = await h.request('PATCH', `/api/issues/${wake.issueId}`, c.token, { status: 'done' });
    expect(disposition.status).toBe(200);
    // the stale evaluation's last step: the stop it classified, handed to triggerReview after the disposition
    expect(await triggerReview(h.services, watchdog.id, staleStop(wake, wake.reviewFingerprint!))).toEqual({
      kind: 'triggered',
      woke: false,
      reviewIssueId: wake.issueId,
    });
    expect((await h.services.db.issue.findUniqueOrThrow({ where: { id: wake.issueId } })).status).toBe('done');
    const row = await eventually('the disposition recorded', async () => {
      const w = await h.services.db.watchdog.findUniqueOrThrow({ where: { id: watchdog.id } });
      return w.lastReviewedFingerprint ? w : null;
    });
    expect(row.lastReviewedFingerprint).toBe(wake.reviewFingerprint);
    expect(await watchdogWakes(watchdog.id)).toHaveLength(1);
  });

  test('an evaluation that read the watchdog before its removal committed wakes nobody', async () => {
    const { c, watcher, root } = await watchedTree();
    const watchdog = await putWatchdog(c, root.id, watcher.id);
    const wake = await firstWake(watchdog.id);
    expect((await h.request('DELETE', `/api/issues/${root.id}/watchdog`, c.token)).status).toBe(200);
    // the stale evaluation's last step: a stop it classified as new, handed to triggerReview after the removal
    const newStop = staleStop(wake, `${wake.reviewFingerprint}-new`);
    expect(await triggerReview(h.services, watchdog.id, newStop)).toEqual({ kind: 'watchdog_removed' });
    expect(await watchdogWakes(watchdog.id)).toHaveLength(1);
  });

  test('a live run keeps the subtree live; the review task and nested watchdog branches do not', async () => {
    const { c, watcher, root, leaf } = await watchedTree();
    const slow = await c.agent({ type: 'process', command: 'sleep', args: ['30'] });
    const nested = await h.services.db.issue.create({
      data: {
        companyId: c.companyId,
        parentId: leaf.id,
        title: 'other watchdog review',
        originKind: 'task_watchdog',
        originId: leaf.id,
        assigneeAgentId: slow.id,
        status: 'todo',
      },
    });
    await h.request('POST', `/api/issues/${nested.id}/wake`, c.token, {});
    const watchdog = await putWatchdog(c, root.id, watcher.id);
    await eventually(
      'stopped despite the nested live branch',
      async () => (await watchdogWakes(watchdog.id)).length === 1,
    );

    const working = await c.issue({
      title: 'in flight',
      parentId: root.id,
      assigneeAgentId: slow.id,
      status: 'in_progress',
    });
    const wake = await h.request('POST', `/api/issues/${working.id}/wake`, c.token, {});
    await eventually('live evaluation', async () => (await watchdogState(root.id)).lastEvaluation?.state === 'live');
    expect(await watchdogWakes(watchdog.id)).toHaveLength(1);
    await h.request('POST', `/api/runs/${wake.body.runId}/stop`, c.token);
    await eventually('a wake after the live path ended', async () => (await watchdogWakes(watchdog.id)).length === 2);
  });

  test('a subtree deeper than 100 levels is incomplete and dispatches nothing', async () => {
    const { c, watcher, root } = await watchedTree();
    let parentId = root.id;
    const chain = [];
    for (let depth = 2; depth <= 101; depth++) {
      const issue = await h.services.db.issue.create({
        data: { companyId: c.companyId, parentId, title: `level ${depth}`, status: 'done' },
      });
      chain.push(issue.id);
      parentId = issue.id;
    }
    const watchdog = await putWatchdog(c, root.id, watcher.id);
    const state = await eventually('incomplete', async () => {
      const s = await watchdogState(root.id);
      return s.lastEvaluation?.state === 'incomplete' ? s : null;
    });
    expect(state.lastEvaluation?.incompleteIssueIds).toEqual([chain[chain.length - 2]]);
    expect(await watchdogWakes(watchdog.id)).toHaveLength(0);
  });

  test('incompleteness is warned once, and again only after the subtree was complete in between', async () => {
    const warn = jest.spyOn(h.services.log, 'warn');
    const { c, watcher, root } = await watchedTree();
    let parentId = root.id;
    for (let depth = 2; depth <= 101; depth++)
      parentId = (
        await h.services.db.issue.create({
          data: { companyId: c.companyId, parentId, title: `level ${depth}`, status: 'done' },
        })
      ).id;
    const deepest = parentId;
    const levelHundred = (await h.services.db.issue.findUniqueOrThrow({ where: { id: deepest } })).parentId!;
    const watchdog = await putWatchdog(c, root.id, watcher.id);
    const warnings = () =>
      warn.mock.calls.filter(([fields]) => (fields as { watchdogId?: string }).watchdogId === watchdog.id).length;
    const evaluatedAs = async (expected: string) => {
      const before = (await watchdogState(root.id)).evaluations;
      await nudge(root.id, watchdog.id);
      await eventually(`a fresh ${expected} evaluation`, async () => {
        const s = await watchdogState(root.id);
        return s.evaluations > before && s.pendingChanges === 0 && s.lastEvaluation?.state === expected;
      });
    };
    await eventually('incomplete', async () => (await watchdogState(root.id)).lastEvaluation?.state === 'incomplete');
    await evaluatedAs('incomplete');
    await evaluatedAs('incomplete');
    expect(warnings()).toBe(1);
    // the deep branch moves within the limit: complete; then back beyond it: one more warning
    await h.services.db.issue.update({ where: { id: deepest }, data: { parentId: root.id } });
    await evaluatedAs('stopped');
    await h.services.db.issue.update({ where: { id: deepest }, data: { parentId: levelHundred } });
    await evaluatedAs('incomplete');
    await evaluatedAs('incomplete');
    expect(warnings()).toBe(2);
    warn.mockRestore();
  });

  test('continue-as-new in the middle of a burst loses no change', async () => {
    const { c, watcher, root, leaf } = await watchedTree();
    const watchdog = await putWatchdog(c, root.id, watcher.id);
    await eventually('first wake', async () => (await watchdogWakes(watchdog.id)).length === 1);
    const handle = h.services.client.workflow.getHandle(workflowId.taskWatchdog(root.id));
    const firstRunId = (await handle.describe()).runId;
    const before = await watchdogState(root.id);
    const burst = () =>
      Promise.all(
        Array.from({ length: 300 }, () =>
          handle.signal(subtreeChangedSignal, { watchdogId: watchdog.id, reason: 'burst' }),
        ),
      );
    await burst();
    // the only material change arrives mid-burst, as one more signal among hundreds
    expect((await h.request('PATCH', `/api/issues/${leaf.id}`, c.token, BLOCKED)).status).toBe(200);
    await burst();
    const after = await eventually('every signal counted', async () => {
      const s = await watchdogState(root.id);
      return s.changesReceived >= before.changesReceived + 601 && s.pendingChanges === 0 ? s : null;
    });
    // the history passed the dev server's suggestion threshold (200 events): the next evaluation continues as new
    await eventually('continued as new', async () => (await handle.describe()).runId !== firstRunId);
    expect(after.changesReceived).toBeGreaterThanOrEqual(before.changesReceived + 601);
    // the successor run carries every count and pending change
    expect((await watchdogState(root.id)).changesReceived).toBeGreaterThanOrEqual(after.changesReceived);
    await eventually('a wake for the mid-burst change', async () => (await watchdogWakes(watchdog.id)).length === 2);
  });

  test('concurrent API writes under one watchdog share their change signals, and the material one among them still wakes', async () => {
    const { c, watcher, root, leaf } = await watchedTree();
    const watchdog = await putWatchdog(c, root.id, watcher.id);
    await eventually('first wake', async () => (await watchdogWakes(watchdog.id)).length === 1);
    const before = await watchdogState(root.id);
    const retitle = (i: number) =>
      h.request('PATCH', `/api/issues/${root.id}`, c.token, { title: `ship feature (${i})` });
    const writes = Array.from({ length: 41 }, (_, i) =>
      i === 20 ? h.request('PATCH', `/api/issues/${leaf.id}`, c.token, BLOCKED) : retitle(i),
    );
    expect((await Promise.all(writes)).map((r) => r.status)).toEqual(writes.map(() => 200));
    await eventually('a wake for the new stop', async () => (await watchdogWakes(watchdog.id)).length === 2);
    // every write was answered after a signal that started after it: at least one arrived, never more than one per write
    const after = await watchdogState(root.id);
    expect(after.changesReceived - before.changesReceived).toBeGreaterThanOrEqual(1);
    expect(after.changesReceived - before.changesReceived).toBeLessThanOrEqual(writes.length);
  });

  test('a burst of 1,000 change signals is coalesced into a handful of evaluations', async () => {
    const { c, watcher, root } = await watchedTree();
    const watchdog = await putWatchdog(c, root.id, watcher.id);
    await eventually('first evaluation', async () => (await watchdogState(root.id)).evaluations >= 1);
    const before = await watchdogState(root.id);
    const handle = h.services.client.workflow.getHandle(workflowId.taskWatchdog(root.id));
    await Promise.all(
      Array.from({ length: 1000 }, () =>
        handle.signal(subtreeChangedSignal, { watchdogId: watchdog.id, reason: 'burst' }),
      ),
    );
    const after = await eventually('all signals processed', async () => {
      const s = await watchdogState(root.id);
      return s.changesReceived >= before.changesReceived + 1000 && s.pendingChanges === 0 ? s : null;
    });
    expect(after.evaluations - before.evaluations).toBeLessThanOrEqual(10);
    expect(await watchdogWakes(watchdog.id)).toHaveLength(1);
  });

  test('removal completes the workflow; re-adding starts fresh', async () => {
    const { c, watcher, root } = await watchedTree();
    const first = await putWatchdog(c, root.id, watcher.id);
    await eventually('wake', async () => (await watchdogWakes(first.id)).length === 1);
    await h.request('DELETE', `/api/issues/${root.id}/watchdog`, c.token);
    const handle = h.services.client.workflow.getHandle(workflowId.taskWatchdog(root.id));
    const result = await handle.result();
    expect(result.removed).toBe(true);
    const second = await putWatchdog(c, root.id, watcher.id);
    expect(second.id).not.toBe(first.id);
    await eventually('fresh wake', async () => (await watchdogWakes(second.id)).length === 1);
    expect(await h.services.db.issue.count({ where: { originKind: 'task_watchdog', originId: root.id } })).toBe(1);
  });
});

describe('worker recovery', () => {
  /** The recovery pings in the current run's history, each with whether a workflow task has handled it yet. */
  async function recoveryPings(issueId: string) {
    const events =
      (await h.services.client.workflow.getHandle(workflowId.taskWatchdog(issueId)).fetchHistory()).events ?? [];
    return events.flatMap((e, i) =>
      e.workflowExecutionSignaledEventAttributes?.signalName === 'watchdogRecovery'
        ? [{ handled: events.slice(i + 1).some((later) => later.workflowTaskCompletedEventAttributes) }]
        : [],
    );
  }

  test('a worker start pings a running watchdog without re-evaluating its subtree', async () => {
    const { c, watcher, root } = await watchedTree();
    const watchdog = await putWatchdog(c, root.id, watcher.id);
    // dispatched: the wake row is committed before its run is created
    const [wake] = await eventually('first wake dispatched', async () => {
      const wakes = await watchdogWakes(watchdog.id);
      return wakes.length === 1 && wakes[0].runId ? wakes : null;
    });
    // quiet: the review run has finished (and with it its change notification); its workflow may not have started yet
    const reviewRun = h.services.client.workflow.getHandle(workflowId.agentRun(wake.runId!));
    await eventually('the review run completed', async () => (await reviewRun.describe()).status.name === 'COMPLETED');
    await eventually(
      'at rest',
      async () =>
        (await watchdogState(root.id)).pendingChanges === 0 &&
        !(await h.services.client.workflow.getHandle(workflowId.taskWatchdog(root.id)).describe()).raw.pendingActivities
          ?.length,
    );
    const before = await watchdogState(root.id);
    await recoverWorkflows(h.services);
    await eventually('the ping handled', async () => (await recoveryPings(root.id)).some((p) => p.handled));
    const after = await watchdogState(root.id);
    expect(after).toMatchObject({
      watchdogId: watchdog.id,
      evaluations: before.evaluations,
      changesReceived: before.changesReceived,
      pendingChanges: 0,
    });
  });

  test('a rollout recovers once: of the workers starting within TREEWARDEN_FLEET_RECOVERY_EVERY_MS, one recovers', async () => {
    const { c, watcher, root } = await watchedTree();
    await putWatchdog(c, root.id, watcher.id);
    const starts = await Promise.all([1, 2, 3].map(() => recoverWorkflowsOncePerFleet(h.services)));
    // this file's workers are in-process and never claimed it: exactly one of the three recovers
    expect(starts.filter((s) => s !== null)).toHaveLength(1);
    const claim = await h.services.db.fleetChoreClaim.findUniqueOrThrow({ where: { chore: 'workflow-recovery' } });
    // the lease lapses: the next start after it recovers again
    await h.services.db.fleetChoreClaim.update({
      where: { chore: 'workflow-recovery' },
      data: { claimedAt: new Date(claim.claimedAt.getTime() - h.services.config.TREEWARDEN_FLEET_RECOVERY_EVERY_MS) },
    });
    const later = await recoverWorkflowsOncePerFleet(h.services);
    expect(later?.watchdogs).toBeGreaterThanOrEqual(1);
    expect(await recoverWorkflowsOncePerFleet(h.services)).toBeNull();
  });

  test('a worker start brings back a watchdog whose workflow is gone, and it evaluates', async () => {
    const { c, watcher, root } = await watchedTree();
    const watchdog = await putWatchdog(c, root.id, watcher.id);
    await eventually('first wake', async () => (await watchdogWakes(watchdog.id)).length === 1);
    const handle = h.services.client.workflow.getHandle(workflowId.taskWatchdog(root.id));
    const lost = (await handle.describe()).runId;
    await handle.terminate('lost, as if the namespace had been reset');
    await recoverWorkflows(h.services);
    const description = await handle.describe();
    expect(description.runId).not.toBe(lost);
    expect(description.status.name).toBe('RUNNING');
    await eventually('evaluated by the new run', async () => (await watchdogState(root.id)).evaluations >= 1);
    // the stop was reviewed-for already (same fingerprint, same pending review): still one wake
    expect(await watchdogWakes(watchdog.id)).toHaveLength(1);
  });

  test('a worker start hands a workflow still running for a removed watchdog to its re-added successor', async () => {
    const { c, watcher, root } = await watchedTree();
    const first = await putWatchdog(c, root.id, watcher.id);
    await eventually('first wake', async () => (await watchdogWakes(first.id)).length === 1);
    // removed and re-added while Temporal was unreachable: the writes landed, neither signal did
    const db = h.services.db;
    const issue = await db.issue.findUniqueOrThrow({ where: { id: root.id } });
    const actor = { kind: 'system', companyId: issue.companyId } as const;
    await removeWatchdog(h.services, issue, actor);
    const { watchdog: second } = await putWatchdogRow(h.services, issue, { agentId: watcher.id }, actor);
    expect((await watchdogState(root.id)).watchdogId).toBe(first.id);
    await recoverWorkflows(h.services);
    await eventually(
      'continued as new for the successor',
      async () => (await watchdogState(root.id)).watchdogId === second.id,
    );
    await eventually(
      'the successor evaluated',
      async () => (await db.watchdog.findUniqueOrThrow({ where: { id: second.id } })).lastEvaluation !== null,
    );
  });
});

describe('authority contract', () => {
  test('a watchdog run may act inside the subtree and is refused everything else, writing nothing', async () => {
    const c = await seedCompany(h);
    const helper = await c.agent();
    const tokenFile = `/tmp/tw-watchdog-token-${Date.now()}`;
    const watcher = await c.agent({
      type: 'process',
      command: 'sh',
      args: ['-c', 'echo "$TREEWARDEN_RUN_TOKEN" > "$OUT"; sleep 60'],
      env: { OUT: tokenFile },
    });
    const root = await c.issue({ title: 'watched' });
    const leaf = await c.issue({ title: 'leaf', parentId: root.id, status: 'done', assigneeAgentId: helper.id });
    const outside = await c.issue({ title: 'elsewhere', status: 'todo' });
    const interactionHuman = await h.request('POST', `/api/issues/${leaf.id}/interactions`, c.token, {
      kind: 'request_confirmation',
      audience: 'human_only',
    });
    const watchdog = await putWatchdog(c, root.id, watcher.id);
    const token = await eventually('watchdog run token', async () => {
      try {
        return readFileSync(tokenFile, 'utf8').trim() || null;
      } catch {
        return null;
      }
    });
    const allowed = [
      await h.request('POST', `/api/issues/${leaf.id}/comments`, token, { body: 'checked the evidence' }),
      await h.request('PATCH', `/api/issues/${leaf.id}`, token, {
        status: 'todo',
        comment: 'reopening: tests missing',
      }),
      await h.request('POST', `/api/companies/${c.companyId}/issues`, token, {
        title: 'follow-up',
        parentId: leaf.id,
        assigneeAgentId: helper.id,
      }),
    ];
    expect(allowed.map((r) => r.status)).toEqual([201, 200, 201]);
    const issuesBefore = await h.services.db.issue.count({ where: { companyId: c.companyId } });
    const denied = [
      await h.request('POST', `/api/issues/${outside.id}/comments`, token, { body: 'probe' }),
      await h.request('PATCH', `/api/issues/${outside.id}`, token, { status: 'in_progress' }),
      await h.request('POST', `/api/companies/${c.companyId}/issues`, token, { title: 'probe', parentId: outside.id }),
      await h.request('POST', `/api/companies/${c.companyId}/issues`, token, { title: 'probe at root' }),
      await h.request('PATCH', `/api/issues/${leaf.id}`, token, { status: 'cancelled' }),
      await h.request('PUT', `/api/issues/${root.id}/watchdog`, token, { agentId: helper.id }),
      await h.request('PATCH', `/api/agents/${helper.id}`, token, { status: 'paused' }),
      await h.request('POST', `/api/interactions/${interactionHuman.body.id}/resolve`, token, {}),
    ];
    expect(denied.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403, 403, 403]);
    for (const r of denied) expect(r.body.error.message.length).toBeGreaterThan(10);
    expect(await h.services.db.issue.count({ where: { companyId: c.companyId } })).toBe(issuesBefore);
    expect(await h.services.db.comment.count({ where: { issueId: outside.id } })).toBe(0);
    const runs = await h.services.db.run.findMany({ where: { agentId: watcher.id, status: 'running' } });
    expect((await h.request('POST', `/api/runs/${runs[0].id}/stop`, token)).status).toBe(403);
    const audit = await h.services.db.activityLog.findFirstOrThrow({
      where: { action: 'issue.comment_added', entityId: leaf.id },
    });
    // the five facts of a watchdog-driven write, each from the server's rows
    const review = await h.services.db.issue.findFirstOrThrow({
      where: { originKind: 'task_watchdog', originId: root.id },
    });
    const [wake] = await watchdogWakes(watchdog.id);
    expect(wake.runId).toBe(runs[0].id);
    expect((audit.details as { watchdog: unknown }).watchdog).toEqual({
      watchdogId: watchdog.id,
      watchedIssueId: root.id,
      reviewIssueId: review.id,
      runId: runs[0].id,
      fingerprint: wake.reviewFingerprint,
    });
    expect(wake.reviewFingerprint).toEqual(expect.any(String));
    await h.request('POST', `/api/runs/${runs[0].id}/stop`, c.token);
  });
});
