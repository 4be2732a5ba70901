/**
 * @module Authorization through the HTTP API with real run tokens (issue 13, items 1 and 3): a run
 * token never stops a run, writes only its own issue, that issue's subtree and its own run, and a
 * watchdog run keeps its contract (shell jobs on its own run yes, gate evidence no). Every refusal
 * writes nothing.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { companyFootprint } from './support/footprint';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_FIRST_RUN_GRACE_MS: '1' });
});
afterAll(async () => {
  await h?.close();
});

type Company = Awaited<ReturnType<typeof seedCompany>>;

/** An agent whose run writes its token to a file and then stays alive; resolves with the live run and its token. */
async function tokenWriter(c: Company) {
  const tokenFile = `/tmp/tw-authz-token-${randomBytes(6).toString('hex')}`;
  const agent = await c.agent({
    type: 'process',
    command: 'sh',
    args: ['-c', 'echo "$TREEWARDEN_RUN_TOKEN" > "$OUT"; sleep 120'],
    env: { OUT: tokenFile },
  });
  const token = () =>
    eventually('the run wrote its token', async () => {
      try {
        return readFileSync(tokenFile, 'utf8').trim() || null;
      } catch {
        return null;
      }
    });
  return { agent, token };
}

async function liveRun(c: Company, title: string) {
  const writer = await tokenWriter(c);
  const issue = await c.issue({ title, assigneeAgentId: writer.agent.id });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  expect(wake.status).toBe(202);
  return { issueId: issue.id, runId: wake.body.runId as string, agentId: writer.agent.id, token: await writer.token() };
}

const row = (id: string) => h.services.db.run.findUniqueOrThrow({ where: { id } });

const footprint = (companyId: string) => companyFootprint(h.services.db, companyId);

async function stopAll(c: Company, runIds: string[]) {
  for (const id of runIds) await h.request('POST', `/api/runs/${id}/stop`, c.token);
}

test('a run token cannot stop another run of its company (nor its own) through either stop route; the board can', async () => {
  const c = await seedCompany(h);
  const a = await liveRun(c, 'agent A works');
  const b = await liveRun(c, 'agent B works');
  await eventually(
    'both runs running',
    async () => (await row(a.runId)).status === 'running' && (await row(b.runId)).status === 'running',
  );
  const before = await footprint(c.companyId);
  const refused = [
    await h.request('POST', `/api/runs/${b.runId}/stop`, a.token),
    await h.request('POST', `/api/work/${b.runId}/stop`, a.token),
    await h.request('POST', `/api/runs/${a.runId}/stop`, a.token),
    await h.request('POST', `/api/work/${a.runId}/stop`, a.token),
  ];
  expect(refused.map((r) => [r.status, r.body.error.code])).toEqual(Array(4).fill([403, 'forbidden']));
  // both routes give the same reason: they share one rule
  expect(new Set(refused.map((r) => r.body.error.message)).size).toBe(1);
  expect(refused[0].body.error.message).toMatch(/requires a board token/);
  expect(await footprint(c.companyId)).toEqual(before);
  expect((await row(b.runId)).status).toBe('running');

  const boardStop = await h.request('POST', `/api/runs/${b.runId}/stop`, c.token);
  expect(boardStop.status).toBe(200);
  expect(
    (await eventually('B cancelled', async () => ((await row(b.runId)).status === 'cancelled' ? row(b.runId) : null)))
      .stopKind,
  ).toBe('operator_stop');
  await stopAll(c, [a.runId]);
});

test('a run token writes only its own issue, its subtree and its own run; everything else of the company is refused and unchanged', async () => {
  const c = await seedCompany(h);
  const mine = await liveRun(c, 'my task');
  const sibling = await liveRun(c, "another agent's task");
  await eventually(
    'both runs running',
    async () => (await row(mine.runId)).status === 'running' && (await row(sibling.runId)).status === 'running',
  );
  const helper = await c.agent();
  const siblingInteraction = await h.request('POST', `/api/issues/${sibling.issueId}/interactions`, c.token, {
    kind: 'request_confirmation',
  });
  expect(siblingInteraction.status).toBe(201);
  const t = mine.token;

  // its own issue, its subtree and its own run
  const child = await h.request('POST', `/api/companies/${c.companyId}/issues`, t, {
    title: 'sub-step',
    parentId: mine.issueId,
    assigneeAgentId: helper.id,
  });
  const grandchild = await h.request('POST', `/api/companies/${c.companyId}/issues`, t, {
    title: 'sub-sub-step',
    parentId: child.body.id,
  });
  const childInteraction = await h.request('POST', `/api/issues/${child.body.id}/interactions`, t, {
    kind: 'question',
  });
  const allowed = [
    child,
    grandchild,
    await h.request('PATCH', `/api/issues/${mine.issueId}`, t, { status: 'in_progress', comment: 'started' }),
    await h.request('POST', `/api/issues/${mine.issueId}/comments`, t, { body: 'progress' }),
    await h.request('PATCH', `/api/issues/${grandchild.body.id}`, t, { status: 'done' }),
    await h.request('POST', `/api/issues/${child.body.id}/comments`, t, { body: 'handing over' }),
    childInteraction,
    await h.request('POST', `/api/interactions/${childInteraction.body.id}/resolve`, t, {
      resolution: { answer: 'yes' },
    }),
    await h.request('POST', `/api/issues/${child.body.id}/wake`, t, {}),
    await h.request('POST', `/api/runs/${mine.runId}/jobs`, t, { kind: 'monitor', command: 'sleep', args: ['60'] }),
    await h.request('POST', `/api/runs/${mine.runId}/evidence`, t, { check: 'unit tests', passed: true }),
    await h.request('GET', `/api/runs/${mine.runId}/inspect`, t),
    // it reads its company
    await h.request('GET', `/api/issues/${sibling.issueId}`, t),
    await h.request('GET', `/api/runs/${sibling.runId}`, t),
    await h.request('GET', `/api/companies/${c.companyId}/issues`, t),
  ];
  expect(allowed.map((r) => r.status)).toEqual([
    201, 201, 200, 201, 200, 201, 201, 200, 202, 201, 201, 200, 200, 200, 200,
  ]);
  await eventually(
    "the woken helper's run settled",
    async () =>
      (await h.services.db.run.count({ where: { agentId: helper.id, status: { in: ['queued', 'running'] } } })) === 0,
  );

  const before = await footprint(c.companyId);
  const denied: [string, { status: number; body: any }][] = [
    ['PATCH another issue', await h.request('PATCH', `/api/issues/${sibling.issueId}`, t, { status: 'done' })],
    [
      'comment on another issue',
      await h.request('POST', `/api/issues/${sibling.issueId}/comments`, t, { body: 'probe' }),
    ],
    [
      'child of another issue',
      await h.request('POST', `/api/companies/${c.companyId}/issues`, t, { title: 'probe', parentId: sibling.issueId }),
    ],
    ['a new root issue', await h.request('POST', `/api/companies/${c.companyId}/issues`, t, { title: 'probe' })],
    ['wake another issue', await h.request('POST', `/api/issues/${sibling.issueId}/wake`, t, {})],
    [
      'interaction on another issue',
      await h.request('POST', `/api/issues/${sibling.issueId}/interactions`, t, { kind: 'probe' }),
    ],
    [
      'resolve on another issue',
      await h.request('POST', `/api/interactions/${siblingInteraction.body.id}/resolve`, t, {}),
    ],
    ['inspect a sibling run', await h.request('GET', `/api/runs/${sibling.runId}/inspect`, t)],
    ['inspect a sibling run (work)', await h.request('GET', `/api/work/${sibling.runId}/inspect`, t)],
    [
      'job on a sibling run',
      await h.request('POST', `/api/runs/${sibling.runId}/jobs`, t, { kind: 'shell_job', command: 'true' }),
    ],
    [
      'evidence on a sibling run',
      await h.request('POST', `/api/runs/${sibling.runId}/evidence`, t, { check: 'forged', passed: true }),
    ],
    ['ack a run', await h.request('POST', `/api/runs/${sibling.runId}/ack`, t)],
    ['silence its own run', await h.request('POST', `/api/runs/${mine.runId}/silence`, t, { decision: 'dismiss' })],
    ['pause its own issue', await h.request('POST', `/api/issues/${mine.issueId}/tree-holds`, t, { mode: 'pause' })],
    ['list holds', await h.request('GET', `/api/issues/${mine.issueId}/tree-holds`, t)],
    [
      'watchdog on its own issue',
      await h.request('PUT', `/api/issues/${mine.issueId}/watchdog`, t, { agentId: helper.id }),
    ],
    [
      'issue with a watchdog',
      await h.request('POST', `/api/companies/${c.companyId}/issues`, t, {
        title: 'probe',
        parentId: mine.issueId,
        watchdog: { agentId: helper.id },
      }),
    ],
    [
      'create an agent',
      await h.request('POST', `/api/companies/${c.companyId}/agents`, t, { name: 'probe', adapter: { type: 'noop' } }),
    ],
    ['change an agent', await h.request('PATCH', `/api/agents/${helper.id}`, t, { status: 'paused' })],
  ];
  expect(denied.map(([what, r]) => [what, r.status])).toEqual(denied.map(([what]) => [what, 403]));
  for (const [, r] of denied) expect(r.body.error.message).toMatch(/^run token: /);
  expect(await footprint(c.companyId)).toEqual(before);
  await stopAll(c, [mine.runId, sibling.runId]);
});

test('a watchdog run may start shell jobs on its own run but not record gate evidence (its contract, seed 000)', async () => {
  const c = await seedCompany(h);
  const writer = await tokenWriter(c);
  const root = await c.issue({ title: 'watched' });
  await c.issue({ title: 'leaf', parentId: root.id, status: 'done' });
  expect(
    (await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: writer.agent.id })).status,
  ).toBe(201);
  const token = await writer.token();
  const review = await eventually('the review run', () =>
    h.services.db.run.findFirst({ where: { agentId: writer.agent.id, status: 'running' } }),
  );
  const job = await h.request('POST', `/api/runs/${review.id}/jobs`, token, { kind: 'shell_job', command: 'true' });
  expect(job.status).toBe(201);
  await eventually(
    'the shell job exited',
    async () => (await h.services.db.job.findUniqueOrThrow({ where: { id: job.body.id } })).status === 'exited',
  );
  const before = await footprint(c.companyId);
  const evidence = await h.request('POST', `/api/runs/${review.id}/evidence`, token, {
    check: 'self-approved',
    passed: true,
  });
  expect(evidence.status).toBe(403);
  expect(evidence.body.error.message).toMatch(/^watchdog authority: recording gate evidence/);
  expect(await footprint(c.companyId)).toEqual(before);
  await stopAll(c, [review.id]);
});
