/**
 * @module The per-company cap on running agent runs (issue 30, item 3): a company at
 * TREEWARDEN_COMPANY_MAX_RUNNING_RUNS queues its next run (its row and the API say it waits for the company's cap; its
 * workflow starts only when a slot frees, and a workflow that started anyway says it waits) and starts it once one of
 * its runs ends, while another company's run starts at once. A burst of one company's claims waits for its turn
 * without taking the process's pooled connections from other work.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { inCompanyTurn } from '../dispatch/company-turn';
import { claimWakeForRun, createWake } from '../dispatch/wakes';
import { claimRunWithinCompanyCap } from '../dispatch/company-cap';
import { beginRun } from '../dispatch/begin';
import { createRunRow } from './support/run-rows';
import { recoverWorkflows } from '../workers/create-worker';
import { workflowId } from '../domain/ids';
import { StateKey } from '../domain/search-attributes';
import { eventually, runRow, seedCompany, settled, startHarness, type Harness } from '../testing/harness';

const CAP = 2;

let h: Harness;
let gates: string;
beforeAll(async () => {
  gates = mkdtempSync(join(tmpdir(), 'treewarden-company-cap-'));
  h = await startHarness({ TREEWARDEN_COMPANY_MAX_RUNNING_RUNS: String(CAP) });
});
afterAll(async () => {
  await h?.close();
  rmSync(gates, { recursive: true, force: true });
});

const gateIssues = new Map<string, string>();

/** A company whose agent runs until the gate file of its issue exists. */
async function gatedCompany(name: string) {
  const c = await seedCompany(h, name);
  const script = `while [ ! -f "${gates}/$TREEWARDEN_ISSUE_ID" ]; do sleep 0.1; done`;
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', script] });
  return {
    c,
    /** wakes a new issue's agent; the run ends when `open(gate)` is called */
    async wake(gate: string) {
      const issue = await c.issue({ title: gate, assigneeAgentId: agent.id });
      gateIssues.set(gate, issue.id);
      const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
      expect(wake.status).toBe(202);
      return wake.body.runId as string;
    },
  };
}
const open = (gate: string) => writeFileSync(join(gates, gateIssues.get(gate)!), '');
const running = (runId: string) =>
  eventually(`run ${runId} running`, async () => (await runRow(h, runId)).status === 'running');

test("a company at its cap queues its next run and starts it when one ends; another company's run starts at once", async () => {
  const a = await gatedCompany('Capped');
  const b = await gatedCompany('Other');
  const [first, second] = [await a.wake('a1'), await a.wake('a2')];
  await running(first);
  await running(second);

  const third = await a.wake('a3');
  const waiting = await eventually('the third run waiting for its company cap', async () => {
    const run = await runRow(h, third);
    return run.companyCapQueuedAt ? run : null;
  });
  expect(waiting.status).toBe('queued');
  const shown = await h.request('GET', `/api/runs/${third}`, a.c.token);
  expect(shown.body).toMatchObject({ status: 'queued', waitingForCompanyCapSince: expect.any(String) });
  // dispatched at the cap, it waits as a row: its workflow costs Temporal nothing until a slot frees
  expect(await h.services.orchestrator.isWorkflowOpen(workflowId.agentRun(third))).toBe(false);
  const fourth = await a.wake('a4');
  await eventually(
    'the fourth run waiting for its company cap',
    async () => (await runRow(h, fourth)).companyCapQueuedAt,
  );
  // a dispatch that raced its company filling up starts the workflow anyway: the workflow's claim waits, and says so
  const { companyId, issueId } = await runRow(h, fourth);
  await h.services.orchestrator.startRun({ runId: fourth, companyId, issueId, title: 'a4' });
  const handle = h.services.client.workflow.getHandle(workflowId.agentRun(fourth));
  await eventually(
    "the fourth run's workflow waiting for its company cap",
    async () => (await handle.describe()).typedSearchAttributes.get(StateKey) === 'waiting_company_cap',
  );

  const other = await b.wake('b1');
  await running(other);
  // the other company's run began while the capped company's third run still waited
  expect((await runRow(h, third)).status).toBe('queued');

  // each slot goes to the run that has waited longest: the third, then the fourth
  open('a1');
  const ended = await settled(h, first);
  await running(third);
  const started = await runRow(h, third);
  expect(started.startedAt!.getTime()).toBeGreaterThanOrEqual(ended.finishedAt!.getTime());
  expect(started.companyCapQueuedAt).toBeNull();
  expect((await h.request('GET', `/api/runs/${third}`, a.c.token)).body.waitingForCompanyCapSince).toBeNull();
  expect((await runRow(h, fourth)).status).toBe('queued');
  open('a2');
  await settled(h, second);
  await running(fourth);

  for (const gate of ['a3', 'a4', 'b1']) open(gate);
  for (const runId of [second, third, fourth, other]) expect((await settled(h, runId)).status).toBe('succeeded');
});

test("a burst of one company's turns waits in memory: no pooled connection waits for the turn's lock", async () => {
  const companyId = randomUUID();
  let entered!: () => void;
  const firstInTurn = new Promise<void>((resolve) => (entered = resolve));
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  let inTurn = 0;
  const order: number[] = [];
  const turn = (i: number) =>
    inCompanyTurn(h.services.db, 'running-runs', companyId, async (tx) => {
      if (++inTurn > 1) throw new Error(`turn ${i} overlapped another`);
      if (i === 0) {
        entered();
        await gate;
      }
      await tx.$queryRaw`SELECT 1`;
      order.push(i);
      inTurn--;
      return i;
    });
  const first = turn(0);
  await firstInTurn;
  const burst = Array.from({ length: 2 * h.services.config.TREEWARDEN_DB_POOL_MAX }, (_, i) => turn(i + 1));
  // waiting in the lock, each turn would hold a connection that the process's other work needs (half the pool
  // measured during a 1,000-member release); nothing else in this test takes an advisory lock. No wait is needed:
  // the turns queue synchronously, and had they gone to the lock instead, they would hold every pooled connection
  // before this query, which asks the same pool after them, got one (it would then time out, not pass).
  const [{ waiting }] = await h.services.db.$queryRaw<{ waiting: number }[]>`
    SELECT count(*)::int AS waiting FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event = 'advisory'`;
  expect(waiting).toBe(0);
  expect(order).toEqual([]);
  openGate();
  expect(await Promise.all([first, ...burst])).toEqual(order);
  expect(order).toEqual([...Array(burst.length + 1).keys()]);
});

test("a run left waiting as a row with its company's slot free (the offer lost with its worker) starts at recovery", async () => {
  const c = await seedCompany(h, 'Offer lost');
  const agent = await c.agent();
  const issue = await c.issue({ title: 'offer lost', assigneeAgentId: agent.id });
  // the state a worker killed between a settlement and its offer leaves: a run waiting as a row, nothing running
  const claim = await h.services.db.$transaction(async (tx) => {
    const { wake } = await createWake(tx, {
      companyId: c.companyId,
      agentId: agent.id,
      issueId: issue.id,
      reason: 'manual',
    });
    return claimWakeForRun(tx, wake.id, c.companyId);
  });
  if (claim.kind !== 'dispatched') throw new Error(`claim: ${claim.kind}`);
  await h.services.db.run.update({ where: { id: claim.runId }, data: { companyCapQueuedAt: new Date() } });
  expect(await h.services.orchestrator.isWorkflowOpen(workflowId.agentRun(claim.runId))).toBe(false);

  await recoverWorkflows(h.services);
  expect((await settled(h, claim.runId)).status).toBe('succeeded');
});

test("a claim's retry after its first attempt began the run carries on with it: a begun run is never given up", async () => {
  // the soak's finding: an attempt queued for the company's turn outlived its activity's timeout and began the run
  // after the server had scheduled the retry; the retry found the run not queued and its workflow ended, leaving it
  // running with no process
  const c = await seedCompany(h, 'Retried claim');
  const agent = await c.agent();
  const issue = await c.issue({ title: 'claimed twice', assigneeAgentId: agent.id });
  const row = { companyId: c.companyId, agentId: agent.id, issueId: issue.id };
  const run = await createRunRow(h.services.db, row);
  expect(await claimRunWithinCompanyCap(h.services, run.id)).toEqual({ kind: 'began' });
  expect(await claimRunWithinCompanyCap(h.services, run.id)).toEqual({ kind: 'began' });
  expect(await beginRun(h.services, run.id)).toBe(true);
  expect(await runRow(h, run.id)).toMatchObject({ status: 'running', companyCapQueuedAt: null });
  // a run stopped before it began is still not begun by a retry
  const stopped = await createRunRow(h.services.db, { ...row, status: 'cancelled' });
  expect(await claimRunWithinCompanyCap(h.services, stopped.id)).toEqual({ kind: 'not_queued' });
});
