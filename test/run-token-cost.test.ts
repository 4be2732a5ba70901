/**
 * @module A run token costs one statement per request (issue 26, item 5): the token, its run and the run's watchdog
 * are read together, and the run's sign of life is written only when the last one is older than the silence
 * grading can tell apart, so a burst of calls writes it once. Counted at node-postgres, where every statement goes.
 */
import { actorOfToken } from '../access/api-tokens';
import { hashToken, newTokenSecret } from '../domain/tokens';
import { seedCompany, startHarness, type Harness } from '../testing/harness';
import { statementsSentDuring } from '../testing/statements';

let h: Harness;
beforeAll(async () => {
  // no worker in this process: nothing else sends statements while a call is counted
  h = await startHarness({ TREEWARDEN_SUPERVISE_EVERY_MS: '60000' }, { inProcessWorker: false });
});
afterAll(async () => {
  await h?.close();
});

async function counted<T>(call: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const { result, sent } = await statementsSentDuring(call);
  return { result, statements: sent.length };
}

test('a burst of run-token calls costs one statement each, and writes the sign of life once', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent();
  const issue = await c.issue({ title: 'busy agent', assigneeAgentId: agent.id });
  const run = await h.services.db.run.create({
    data: {
      companyId: c.companyId,
      issueId: issue.id,
      agentId: agent.id,
      wakeReason: 'manual_wake',
      status: 'running',
    },
  });
  const secret = newTokenSecret('twr');
  await h.services.db.apiToken.create({
    data: { tokenHash: hashToken(secret), kind: 'run', companyId: c.companyId, agentId: agent.id, runId: run.id },
  });
  const first = await counted(() => actorOfToken(h.services, secret));
  expect(first.result).toMatchObject({ kind: 'run', runId: run.id, issueId: issue.id, watchdog: null });
  expect(first.statements).toBe(2); // the read, and the first sign of life
  const signOfLife = (await h.services.db.run.findUniqueOrThrow({ where: { id: run.id } })).lastApiActivityAt;
  expect(signOfLife).not.toBeNull();
  for (let i = 0; i < 5; i++) expect((await counted(() => actorOfToken(h.services, secret))).statements).toBe(1);
  expect((await h.services.db.run.findUniqueOrThrow({ where: { id: run.id } })).lastApiActivityAt).toEqual(signOfLife);
  // a board token is one statement too
  expect((await counted(() => actorOfToken(h.services, c.token))).statements).toBe(1);
});
