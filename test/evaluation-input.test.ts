/**
 * @module The evaluation's one read (watchdogs/subtree-snapshot.ts): every walked issue comes back once with its
 * run facts, and every sparse fact (queued wake, pending monitor, blocker, pending interaction, active execution
 * blocker) lands on its issue and nowhere else; facts that no longer hold, and the review task's subtree, are left
 * out.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/prisma';
import { loadEvaluationInput } from '../watchdogs/subtree-snapshot';
import { TASK_WATCHDOG_ORIGIN } from '../domain/statuses';
import { seedCompany, startHarness, type Harness } from '../testing/harness';

let h: Harness;
let db: Db;
beforeAll(async () => {
  h = await startHarness();
  db = h.services.db;
});
afterAll(async () => {
  await h?.close();
});

/** root → a → (a1, a2); root → b; root → review (a watchdog review task) → inReview */
async function watchedTree() {
  const { companyId, agent } = await seedCompany(h);
  const agentId = (await agent()).id;
  const id = { root: randomUUID(), a: randomUUID(), a1: randomUUID(), a2: randomUUID(), b: randomUUID() };
  const review = randomUUID();
  const inReview = randomUUID();
  const issue = (issueId: string, parentId: string | null, extra: Record<string, unknown> = {}) => ({
    id: issueId,
    companyId,
    parentId,
    title: issueId,
    ...extra,
  });
  await db.issue.createMany({
    data: [
      issue(id.root, null, { status: 'in_progress' }),
      issue(id.a, id.root, { status: 'in_progress', assigneeAgentId: agentId }),
      issue(id.a1, id.a, { status: 'blocked' }),
      issue(id.a2, id.a, { status: 'todo', assigneeAgentId: agentId }),
      issue(id.b, id.root, { status: 'done' }),
      issue(review, id.root, { status: 'todo', originKind: TASK_WATCHDOG_ORIGIN }),
      issue(inReview, review, { status: 'todo' }),
    ],
  });
  return { companyId, agentId, id, review, inReview };
}

test('each walked issue once, with its own facts; stale facts and the review subtree left out', async () => {
  const { companyId, agentId, id, review, inReview } = await watchedTree();
  const run = (issueId: string, status: 'running' | 'succeeded') =>
    db.run.create({ data: { companyId, issueId, agentId, status, wakeReason: 'test' } });
  await run(id.a, 'running');
  await run(id.a, 'succeeded');
  await run(id.a1, 'succeeded');
  await run(inReview, 'running');
  await db.issueBlocker.createMany({
    data: [
      { issueId: id.a1, blockerIssueId: id.b },
      { issueId: id.a1, blockerIssueId: id.a2 },
    ],
  });
  const interaction = (issueId: string, status: 'pending' | 'resolved') =>
    db.interaction.create({ data: { companyId, issueId, kind: 'question', status, createdByKind: 'agent' } });
  const pending = await interaction(id.a2, 'pending');
  await interaction(id.a2, 'resolved');
  await interaction(inReview, 'pending');
  const blocker = (issueId: string, status: 'active' | 'resolved') =>
    db.executionBlocker.create({ data: { companyId, issueId, cause: 'test', nextAction: 'decide', status } });
  const active = await blocker(id.b, 'active');
  await blocker(id.b, 'resolved');
  const wake = (issueId: string, status: 'queued' | 'claimed') =>
    db.wakeRequest.create({ data: { companyId, agentId, issueId, reason: 'test', status } });
  await wake(id.a2, 'queued');
  await wake(id.a2, 'queued');
  await wake(id.b, 'claimed');
  // a pending monitor is a fact of its issue; one that fired is not
  const monitor = (issueId: string, status: 'pending' | 'fired') =>
    db.issueMonitor.create({ data: { companyId, issueId, at: new Date(Date.now() + 3_600_000), status } });
  await monitor(id.a1, 'pending');
  await monitor(id.b, 'fired');
  const watchdog = await db.watchdog.create({
    data: {
      companyId,
      issueId: id.root,
      activeIssueId: id.root,
      agentId,
      reviewIssueId: review,
      pendingReviewFingerprint: 'f1',
      incompleteIssueIds: [],
    },
  });

  const input = await loadEvaluationInput(db, watchdog.id);

  expect(input.watchdog).toMatchObject({ id: watchdog.id, status: 'active', issueId: id.root, agentId });
  expect(input.review).toEqual({ id: review, status: 'todo', assigneeAgentId: null });
  const issues = await db.issue.findMany({ where: { id: { in: Object.values(id) } } });
  const createdAtMs = new Map(issues.map((i) => [i.id, i.createdAt.getTime()]));
  const facts = (issueId: string, parentId: string | null, depth: number, status: string) => ({
    id: issueId,
    parentId,
    depth,
    status,
    assigneeAgentId: null,
    createdAtMs: createdAtMs.get(issueId),
    hasAnyRun: false,
    hasLiveRun: false,
    hasQueuedWake: false,
    hasPendingMonitor: false,
    blockerIds: [],
    pendingInteractionIds: [],
    executionBlockerIds: [],
  });
  const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
  const nodes = input.nodes.map((n) => ({ ...n, blockerIds: [...n.blockerIds].sort() })).sort(byId);
  expect(nodes).toEqual(
    [
      facts(id.root, null, 1, 'in_progress'),
      { ...facts(id.a, id.root, 2, 'in_progress'), assigneeAgentId: agentId, hasAnyRun: true, hasLiveRun: true },
      {
        ...facts(id.a1, id.a, 3, 'blocked'),
        hasAnyRun: true,
        hasPendingMonitor: true,
        blockerIds: [id.a2, id.b].sort(),
      },
      {
        ...facts(id.a2, id.a, 3, 'todo'),
        assigneeAgentId: agentId,
        hasQueuedWake: true,
        pendingInteractionIds: [pending.id],
      },
      { ...facts(id.b, id.root, 2, 'done'), executionBlockerIds: [active.id] },
    ].sort(byId),
  );
});

test('a watchdog that is not active reads no subtree; a missing one reads nothing', async () => {
  const { companyId, agentId, id } = await watchedTree();
  const watchdog = await db.watchdog.create({
    data: { companyId, issueId: id.root, agentId, status: 'disabled', incompleteIssueIds: [] },
  });
  const disabled = await loadEvaluationInput(db, watchdog.id);
  expect(disabled.watchdog).toMatchObject({ id: watchdog.id, status: 'disabled' });
  expect(disabled.review).toBeNull();
  expect(disabled.nodes).toEqual([]);
  expect(await loadEvaluationInput(db, randomUUID())).toEqual({ watchdog: null, review: null, nodes: [] });
});
