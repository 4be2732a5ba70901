/**
 * @module Recovery capsules (issue 17): a run that continues or replaces earlier work finds a compact
 * account of it in its context (`capsule`) and in TREEWARDEN_CAPSULE_FILE: a resume after a hold, a
 * resume after a reconciliation, a replacement after a failed run, and the watchdog's review run.
 * Each stays within 8 KiB however much the earlier run wrote, keeping its newest lines.
 */
import { existsSync, readFileSync } from 'node:fs';
import { CAPSULE_MAX_BYTES } from '../domain/capsule';
import { runFiles } from '../runs/run-files';
import { eventually, seedCompany, settled, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1' });
});
afterAll(async () => {
  await h?.close();
});

/** A continuing run prints its capsule file and exits 0; a first run does `work` first. */
const script = (work: string) =>
  `if [ -n "$TREEWARDEN_CAPSULE_FILE" ]; then cat "$TREEWARDEN_CAPSULE_FILE"; exit 0; fi; ${work}`;
/** Writes its journal, then works until stopped, with no checkpoint. */
const WORKS_UNTIL_STOPPED = script(
  'echo "editing src/a.ts" >> "$TREEWARDEN_JOURNAL_FILE"; echo "started"; sleep 600 & wait',
);

/** The capsule as the run saw it (its file, printed), checked against its recorded directive. */
async function capsuleOf(runId: string) {
  const run = await settled(h, runId);
  expect(run.status).toBe('succeeded');
  const printed = readFileSync(runFiles(runId, null).output, 'utf8');
  expect(Buffer.byteLength(printed)).toBeLessThanOrEqual(CAPSULE_MAX_BYTES);
  const capsule = JSON.parse(printed);
  expect((run.directive as { capsule?: unknown }).capsule).toEqual(capsule);
  return capsule;
}

async function wake(token: string, issueId: string) {
  const r = await h.request('POST', `/api/issues/${issueId}/wake`, token, {});
  expect(r.status).toBe(202);
  return r.body.runId as string;
}

test('a resume after a reconciled pause gets the interrupted run, its journal, its monitor and how it ended', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', WORKS_UNTIL_STOPPED] });
  const parent = await c.issue({ title: 'parent' });
  const child = await c.issue({
    title: 'child',
    parentId: parent.id,
    assigneeAgentId: agent.id,
    status: 'in_progress',
  });
  const runId = await wake(c.token, child.id);
  await eventually(
    'mid-command',
    async () =>
      (await h.services.db.run.findUniqueOrThrow({ where: { id: runId } })).adapterEntered &&
      existsSync(runFiles(runId, null).journal),
  );
  const monitor = await h.request('POST', `/api/runs/${runId}/jobs`, c.token, {
    kind: 'monitor',
    command: 'sleep',
    args: ['600'],
  });
  expect(monitor.status).toBe(201);
  const hold = await h.request('POST', `/api/issues/${parent.id}/tree-holds`, c.token, { mode: 'pause' });
  await settled(h, runId);
  await h.request('POST', `/api/issues/${parent.id}/tree-holds/${hold.body.id}/release`, c.token, {});
  const blocker = await h.services.db.executionBlocker.findFirstOrThrow({ where: { runId } });
  await h.request('POST', `/api/execution-blockers/${blocker.id}/resolve`, c.token, { resolution: 'effects_reviewed' });
  const resumed = await eventually('the resumed run', () =>
    h.services.db.run.findFirst({ where: { issueId: child.id, wakeReason: 'issue_tree_resumed' } }),
  );
  const capsule = await capsuleOf(resumed.id);
  expect(capsule).toMatchObject({
    version: 1,
    kind: 'resume_after_reconciliation',
    issueId: child.id,
    previousRun: {
      runId,
      issueId: child.id,
      status: 'cancelled',
      stopKind: 'operator_hold',
      stopOutcome: 'unknown_outcome',
      checkpoint: null,
      journal: ['editing src/a.ts'],
    },
    openBlockers: [],
    omitted: {},
  });
  expect(capsule.previousRun.verdict).toEqual(expect.any(String));
  expect(capsule.previousRun.jobs).toEqual([
    expect.objectContaining({ id: monitor.body.id, kind: 'monitor', command: 'sleep 600' }),
  ]);
});

test('a replacement after a failed run gets its exit code, output tail and journal; a huge record stays within 8 KiB, newest kept', async () => {
  const c = await seedCompany(h);
  // 3,000 journal lines and 1 MB of output, then a failure
  const noisy = script(
    'pad=$(printf %0100d 0); i=0; while [ $i -lt 3000 ]; do echo "journal line $i $pad" >> "$TREEWARDEN_JOURNAL_FILE"; i=$((i+1)); done; ' +
      'head -c 1000000 /dev/zero | tr "\\0" x; echo; echo "boom: tests failed"; exit 3',
  );
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', noisy] });
  const issue = await c.issue({ title: 'flaky', assigneeAgentId: agent.id, status: 'in_progress' });
  const failed = await wake(c.token, issue.id);
  expect(await settled(h, failed)).toMatchObject({ status: 'failed', exitCode: 3 });
  const replacement = await wake(c.token, issue.id);
  const capsule = await capsuleOf(replacement);
  expect(capsule).toMatchObject({
    kind: 'replacement',
    previousRun: { runId: failed, status: 'failed', exitCode: 3, failureState: 'inspected' },
  });
  expect(capsule.previousRun.outputTail).toMatch(/boom: tests failed\n?$/);
  expect(capsule.previousRun.journal.at(-1)).toMatch(/^journal line 2999 /);
  expect(capsule.omitted.journalLines).toBeGreaterThan(0);
});

test("the watchdog's review run gets the stopped leaves with their last runs", async () => {
  const c = await seedCompany(h);
  const worker = await c.agent({ type: 'process', command: 'sh', args: ['-c', 'exit 1'] });
  const watcher = await c.agent();
  const root = await c.issue({ title: 'watched' });
  const leaf = await c.issue({
    title: 'stuck leaf',
    parentId: root.id,
    assigneeAgentId: worker.id,
    status: 'in_progress',
  });
  const leafRun = await wake(c.token, leaf.id);
  await settled(h, leafRun);
  await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  const review = await eventually('the review run', () =>
    h.services.db.run.findFirst({ where: { agentId: watcher.id } }),
  );
  await settled(h, review.id);
  const { capsule } = (await h.services.db.run.findUniqueOrThrow({ where: { id: review.id } })).directive as {
    capsule: any;
  };
  expect(capsule).toMatchObject({ kind: 'watchdog_review', previousRun: null, review: { watchedIssueId: root.id } });
  expect(capsule.review.stoppedLeaves).toEqual([
    expect.objectContaining({
      issueId: leaf.id,
      title: 'stuck leaf',
      status: 'in_progress',
      lastRun: expect.objectContaining({ runId: leafRun, status: 'failed', exitCode: 1 }),
    }),
  ]);
});
