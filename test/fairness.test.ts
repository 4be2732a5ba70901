/**
 * @module Fairness between companies (issue 30, item 4): while company A's 200-member release has its resumed runs backlogged
 * in the agents' task queue (more agents than the worker has agent slots), company B's single wake starts its
 * agent before half of A's backlog has. An ordering from the recorded start times of the agents' processes
 * (`processStartTime`, the kernel's clock ticks after boot: one clock for every run on this host), not a timing
 * assertion. A's agents wait for a gate, so the backlog stands however fast the release fans out; B's wake joins it,
 * then the gate opens and the queue drains. Without `matching.enableFairness` B's tasks, queued last, start after
 * the whole backlog.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startInterruptedHold } from '../bench/release-fanout';
import { workflowId } from '../domain/ids';
import { eventually, seedCompany, settled, startHarness, type Harness } from '../testing/harness';
import { closedGate, type Gate } from './support/gate';

/** The worker's agent slots: that many of A's agents run, the rest of A's resumes queue. */
const AGENT_SLOTS = 10;
/**
 * The issue's release: all but the slots' worth of it queues. 200 members prove the order (with 100, 11 of 90 started
 * before B's agent; with fairness off, 70 of 90 did); bench/fairness.ts times B's wake during a 1,000-member release.
 */
const MEMBERS = 200;
/**
 * How long each of A's agents runs once the gate opens: the slots turn over this often, so the A agents that start
 * while B's run goes from its claim to its execution (one workflow task) are a few slots' worth, not the backlog.
 */
const A_AGENT_SECONDS = 0.5;

let h: Harness;
let pool: pg.Pool;
let gate: Gate;
beforeAll(async () => {
  gate = await closedGate();
  // the company cap (64 by default) would keep A below the worker's slots, which is its own protection: this test
  // isolates the queue's fairness
  h = await startHarness({
    TREEWARDEN_COMPANY_MAX_RUNNING_RUNS: String(MEMBERS * 2),
    TREEWARDEN_WORKER_MAX_AGENT_RUNS: String(AGENT_SLOTS),
  });
  pool = new pg.Pool({ connectionString: h.services.config.DATABASE_URL, max: 2 });
});
afterAll(async () => {
  await gate?.remove();
  await pool?.end();
  await h?.close();
});

const agentStart = (run: { processStartTime: string | null }) => BigInt(run.processStartTime!);

test("company B's single wake starts its agent before half of company A's backlogged resumes have", async () => {
  const a = await seedCompany(h, 'Releasing');
  // each resumed agent holds its agent slot until the gate opens: the slots fill, the rest of A's resumes queue
  const agentA = await a.agent(gate.agent(A_AGENT_SECONDS));
  const hold = await startInterruptedHold(h, pool, a.companyId, agentA.id, MEMBERS);
  const b = await seedCompany(h, 'Waking');
  const issueB = await b.issue({
    title: 'one wake',
    assigneeAgentId: (await b.agent({ type: 'process', command: 'true' })).id,
  });

  const actor = { kind: 'system' as const, companyId: a.companyId };
  const report = await h.services.orchestrator.releaseHold({
    holdId: hold.holdId,
    releaseId: randomUUID(),
    wakeAgents: false,
    actor,
  });
  expect(report.resumed).toHaveLength(MEMBERS);
  const resumedIds = report.resumed.map(({ runId }) => runId);
  const notStarted = async () =>
    h.services.db.run.findMany({ where: { id: { in: resumedIds }, processStartTime: null }, select: { id: true } });
  // the worker's slots are full of A's agents and the rest of A's resumes wait in the queue
  await eventually('the worker busy with A', async () => (await notStarted()).length <= MEMBERS - AGENT_SLOTS, 300_000);

  const wake = await h.request('POST', `/api/issues/${issueB.id}/wake`, b.token, {});
  expect(wake.status).toBe(202);
  // B's agent is in the agents' queue behind A's backlog before the slots free
  await eventually("B's agent queued", async () => {
    const described = await h.services.client.workflow.getHandle(workflowId.agentRun(wake.body.runId)).describe();
    const pending = described.raw.pendingActivities ?? [];
    return pending.some((activity) => activity.activityType?.name === 'executeRun') ? true : null;
  });
  const backlog = new Set((await notStarted()).map((run) => run.id));
  expect(backlog.size).toBeGreaterThanOrEqual(MEMBERS - AGENT_SLOTS);
  await gate.open();

  const runB = await settled(h, wake.body.runId, 300_000);
  expect(runB.status).toBe('succeeded');
  // A's runs that had not started by the time B's run ended did not overtake it: A's backlog need not drain first
  const startedA = await h.services.db.run.findMany({
    where: { id: { in: [...backlog] }, processStartTime: { not: null } },
    select: { processStartTime: true },
  });
  const overtakers = startedA.filter((run) => agentStart(run) < agentStart(runB)).length;
  expect(overtakers).toBeLessThan(backlog.size / 2);
}, 900_000);
