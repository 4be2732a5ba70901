/**
 * @module The API refuses what it must and writes nothing: missing or bad tokens (401), foreign or malformed ids
 * (404, 400), bad bodies (400, 413), a board creating companies (403), and bad input on every remaining route.
 */
import { ADMIN_TOKEN, seedCompany, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('authentication and errors', () => {
  test('missing or bad tokens are 401; healthz needs none', async () => {
    expect((await h.request('GET', '/healthz', null)).status).toBe(200);
    const missing = await h.request('POST', '/api/companies', null, { name: 'x' });
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe('unauthorized');
    expect((await h.request('POST', '/api/companies', 'nope', { name: 'x' })).status).toBe(401);
    expect(await h.services.db.company.count({ where: { name: 'x' } })).toBe(0);
  });

  test("another company's ids are 404 and malformed ids 400, nothing written", async () => {
    const a = await seedCompany(h, 'A');
    const b = await seedCompany(h, 'B');
    const issue = await a.issue({ title: 'secret' });
    expect((await h.request('GET', `/api/issues/${issue.id}`, b.token)).status).toBe(404);
    expect((await h.request('PATCH', `/api/issues/${issue.id}`, b.token, { title: 'mine' })).status).toBe(404);
    const bad = await h.request('GET', '/api/issues/not-a-uuid', a.token);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('id');
    expect((await h.request('POST', `/api/companies/${a.companyId}/issues`, b.token, { title: 't' })).status).toBe(404);
    const unchanged = await h.request('GET', `/api/issues/${issue.id}`, a.token);
    expect(unchanged.body.title).toBe('secret');
  });

  test.each([
    ['POST', '/api/companies', { name: '' }],
    ['POST', '/api/companies', { name: 'ok', extra: 1 }],
    ['POST', '/api/companies', '{not json'],
  ])('%s %s with bad body is 400', async (method, url, body) => {
    const before = await h.services.db.company.count();
    const r = await h.request(method as 'POST', url, ADMIN_TOKEN, body);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('bad_request');
    expect(await h.services.db.company.count()).toBe(before);
  });

  test('bad agent, issue, wake and patch bodies are 400 and write nothing', async () => {
    const c = await seedCompany(h);
    const cases: [string, string, unknown][] = [
      ['POST', `/api/companies/${c.companyId}/agents`, { name: 'a', adapter: { type: 'process' } }],
      ['POST', `/api/companies/${c.companyId}/agents`, { name: 'a', adapter: { type: 'teleport' } }],
      ['POST', `/api/companies/${c.companyId}/issues`, { title: 'x', status: 'wandering' }],
      ['POST', `/api/companies/${c.companyId}/issues`, { title: 'x', parentId: 'nope' }],
    ];
    for (const [method, url, body] of cases) {
      const r = await h.request(method as 'POST', url, c.token, body);
      expect([r.status, url]).toEqual([400, url]);
    }
    expect(await h.services.db.agent.count({ where: { companyId: c.companyId } })).toBe(0);
    expect(await h.services.db.issue.count({ where: { companyId: c.companyId } })).toBe(0);
    const big = await h.request('POST', `/api/companies/${c.companyId}/issues`, c.token, {
      title: 'x'.repeat(2 * 1024 * 1024),
    });
    expect(big.status).toBe(413);
  });

  test('a board token cannot create companies (403)', async () => {
    const c = await seedCompany(h);
    expect((await h.request('POST', '/api/companies', c.token, { name: 'other' })).status).toBe(403);
  });
});

test('every remaining route refuses bad input with a 4xx and writes nothing', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent();
  const issue = await c.issue({ title: 'target', assigneeAgentId: agent.id });
  const counts = async () => [
    await h.services.db.comment.count({ where: { issueId: issue.id } }),
    await h.services.db.wakeRequest.count({ where: { issueId: issue.id } }),
    await h.services.db.interaction.count({ where: { issueId: issue.id } }),
    await h.services.db.watchdog.count({ where: { issueId: issue.id } }),
  ];
  const before = await counts();
  const cases: [string, string, unknown, number][] = [
    ['POST', `/api/issues/${issue.id}/comments`, { body: '' }, 400],
    ['POST', `/api/issues/${issue.id}/comments`, { text: 'wrong field' }, 400],
    ['POST', '/api/issues/123/comments', { body: 'x' }, 400],
    ['POST', `/api/issues/${issue.id}/wake`, { idempotencyKey: '' }, 400],
    ['POST', `/api/issues/${issue.id}/interactions`, { kind: 'ask', audience: 'everyone' }, 400],
    ['POST', '/api/interactions/zzz/resolve', {}, 400],
    ['POST', `/api/interactions/${issue.id}/resolve`, {}, 404],
    ['PUT', `/api/issues/${issue.id}/watchdog`, { agentId: agent.id, extra: true }, 400],
    ['DELETE', `/api/issues/${issue.id}/watchdog`, undefined, 404],
    ['PATCH', `/api/agents/${agent.id}`, { status: 'asleep' }, 400],
    ['PATCH', `/api/issues/${issue.id}`, { blockedByIssueIds: [issue.id] }, 400],
    ['POST', '/api/runs/nope/stop', undefined, 400],
    ['GET', `/api/runs/${issue.id}`, undefined, 404],
  ];
  for (const [method, url, body, status] of cases) {
    const r = await h.request(method as 'POST', url, c.token, body);
    expect([method, url, r.status]).toEqual([method, url, status]);
    expect(typeof r.body.error.message).toBe('string');
  }
  expect(await counts()).toEqual(before);
  expect((await h.request('GET', `/api/agents/${agent.id}`, c.token)).status).toBe(404);
});
