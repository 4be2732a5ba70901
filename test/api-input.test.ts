/**
 * @module Request input that PostgreSQL or Prisma cannot take (issue 13, item 4) is a 400 naming the
 * field, with nothing written, on every route: NUL in strings, NUL or lone surrogates in JSON record
 * values and keys, JSON nested thousands of levels deep, a lone surrogate in a title. And the health
 * check is matched by route, not raw URL (item 7).
 */
import { ADMIN_TOKEN, eventually, seedCompany, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const NUL = 'a\u0000b';
const HIGH = 'a\uD800b';
const LOW = 'a\uDC00b';

function nested(levels: number): Record<string, unknown> {
  let value: unknown = 'bottom';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value as Record<string, unknown>;
}

async function footprint() {
  const db = h.services.db;
  const [companies, agents, issues, comments, wakes, runs, interactions, evidence, jobs, holds, watchdogs, activity] =
    await Promise.all([
      db.company.count(),
      db.agent.findMany({ select: { id: true, name: true, adapter: true } }),
      db.issue.findMany({ select: { id: true, title: true, status: true } }),
      db.comment.count(),
      db.wakeRequest.count(),
      db.run.count(),
      db.interaction.findMany({ select: { id: true, status: true } }),
      db.gateEvidence.count(),
      db.job.count(),
      db.treeHold.count(),
      db.watchdog.count(),
      db.activityLog.count(),
    ]);
  return { companies, agents, issues, comments, wakes, runs, interactions, evidence, jobs, holds, watchdogs, activity };
}

test('every bad string or JSON record is a 400 naming the field, on every route, and writes nothing', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent();
  const issue = await c.issue({ title: 'target', assigneeAgentId: agent.id });
  const interaction = await h.request('POST', `/api/issues/${issue.id}/interactions`, c.token, { kind: 'question' });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  const runId = wake.body.runId as string;
  await eventually(
    'the run settled',
    async () => (await h.services.db.run.findUniqueOrThrow({ where: { id: runId } })).status === 'succeeded',
  );
  const agentsUrl = `/api/companies/${c.companyId}/agents`;
  const issuesUrl = `/api/companies/${c.companyId}/issues`;
  const processAgent = (patch: Record<string, unknown>) => ({
    name: 'p',
    adapter: { type: 'process', command: 'true', ...patch },
  });

  const cases: [method: 'POST' | 'PATCH' | 'PUT', url: string, token: string, body: unknown, field: string][] = [
    ['POST', '/api/companies', ADMIN_TOKEN, { name: NUL }, 'name'],
    ['POST', agentsUrl, c.token, { name: NUL, adapter: { type: 'noop' } }, 'name'],
    ['POST', agentsUrl, c.token, processAgent({ command: NUL }), 'adapter.command'],
    ['POST', agentsUrl, c.token, processAgent({ args: ['ok', NUL] }), 'adapter.args.1'],
    ['POST', agentsUrl, c.token, processAgent({ env: { TOOL: NUL } }), 'adapter.env.TOOL'],
    ['POST', agentsUrl, c.token, processAgent({ cwd: HIGH }), 'adapter.cwd'],
    ['PATCH', `/api/agents/${agent.id}`, c.token, { name: LOW }, 'name'],
    ['POST', issuesUrl, c.token, { title: NUL }, 'title'],
    ['POST', issuesUrl, c.token, { title: HIGH }, 'title'],
    [
      'POST',
      issuesUrl,
      c.token,
      { title: 'ok', watchdog: { agentId: agent.id, instructions: NUL } },
      'watchdog.instructions',
    ],
    ['PATCH', `/api/issues/${issue.id}`, c.token, { title: LOW }, 'title'],
    ['PATCH', `/api/issues/${issue.id}`, c.token, { comment: NUL }, 'comment'],
    ['POST', `/api/issues/${issue.id}/comments`, c.token, { body: NUL }, 'body'],
    ['POST', `/api/issues/${issue.id}/comments`, c.token, { body: HIGH }, 'body'],
    ['POST', `/api/issues/${issue.id}/wake`, c.token, { reason: NUL }, 'reason'],
    ['POST', `/api/issues/${issue.id}/wake`, c.token, { idempotencyKey: NUL }, 'idempotencyKey'],
    ['POST', `/api/issues/${issue.id}/wake`, c.token, { context: { note: NUL } }, 'context.note'],
    ['POST', `/api/issues/${issue.id}/wake`, c.token, { context: { [NUL]: 1 } }, 'context'],
    ['POST', `/api/issues/${issue.id}/wake`, c.token, { context: { list: ['ok', LOW] } }, 'context.list.1'],
    ['POST', `/api/issues/${issue.id}/wake`, c.token, { context: nested(2_500) }, 'context.a.a'],
    ['POST', `/api/issues/${issue.id}/wake`, c.token, { context: { big: 'x'.repeat(70_000) } }, 'context'],
    ['POST', `/api/issues/${issue.id}/interactions`, c.token, { kind: NUL }, 'kind'],
    [
      'POST',
      `/api/interactions/${interaction.body.id}/resolve`,
      c.token,
      { resolution: { answer: NUL } },
      'resolution.answer',
    ],
    [
      'POST',
      `/api/interactions/${interaction.body.id}/resolve`,
      c.token,
      { resolution: { [HIGH]: 'key' } },
      'resolution',
    ],
    [
      'POST',
      `/api/interactions/${interaction.body.id}/resolve`,
      c.token,
      { resolution: nested(3_000) },
      'resolution.a.a',
    ],
    ['PUT', `/api/issues/${issue.id}/watchdog`, c.token, { agentId: agent.id, instructions: HIGH }, 'instructions'],
    ['POST', `/api/issues/${issue.id}/tree-holds`, c.token, { mode: 'pause', reason: NUL }, 'reason'],
    ['POST', `/api/runs/${runId}/jobs`, c.token, { kind: 'shell_job', command: NUL }, 'command'],
    ['POST', `/api/runs/${runId}/jobs`, c.token, { kind: 'shell_job', command: 'echo', args: [NUL] }, 'args.0'],
    ['POST', `/api/runs/${runId}/evidence`, c.token, { check: NUL, passed: true }, 'check'],
    [
      'POST',
      `/api/runs/${runId}/evidence`,
      c.token,
      { check: 'ci', passed: true, details: { log: NUL } },
      'details.log',
    ],
    [
      'POST',
      `/api/runs/${runId}/evidence`,
      c.token,
      { check: 'ci', passed: true, details: { [NUL]: true } },
      'details',
    ],
    [
      'POST',
      `/api/runs/${runId}/evidence`,
      c.token,
      { check: 'ci', passed: true, details: { log: HIGH } },
      'details.log',
    ],
    [
      'POST',
      `/api/runs/${runId}/evidence`,
      c.token,
      { check: 'ci', passed: true, details: nested(2_500) },
      'details.a.a',
    ],
  ];
  const before = await footprint();
  const answers = [];
  for (const [method, url, token, body, field] of cases) {
    const r = await h.request(method, url, token, body);
    answers.push({
      method,
      url,
      field,
      status: r.status,
      namesField: typeof r.body?.error?.message === 'string' && r.body.error.message.startsWith(`${field}`),
    });
  }
  expect(answers).toEqual(
    cases.map(([method, url, , , field]) => ({ method, url, field, status: 400, namesField: true })),
  );
  expect(await footprint()).toEqual(before);
});

test('well-formed text (a surrogate pair, nesting within the cap) is accepted and stored exactly', async () => {
  const c = await seedCompany(h);
  const title = 'ship it \u{1F680} — ünïcödé';
  const issue = await c.issue({ title });
  expect((await h.services.db.issue.findUniqueOrThrow({ where: { id: issue.id } })).title).toBe(title);
  const agent = await c.agent();
  await h.request('PATCH', `/api/issues/${issue.id}`, c.token, { assigneeAgentId: agent.id });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, { context: nested(60) });
  expect(wake.status).toBe(202);
});

test('the health check answers by route: with a query string and a trailing slash, without a token', async () => {
  for (const url of ['/healthz', '/healthz?x=1', '/healthz/', '/healthz/?probe=lb']) {
    const r = await h.request('GET', url, null);
    expect({ url, status: r.status, body: r.body }).toEqual({ url, status: 200, body: { status: 'ok' } });
  }
  expect((await h.request('GET', '/api/companies/x/issues?healthz', null)).status).toBe(401);
});
