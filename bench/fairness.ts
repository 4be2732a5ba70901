/**
 * Scenario 9 (issue 30): company B's wake-to-run latency (the wake's request until its run's claim, `startedAt`)
 * while company A's release re-dispatches hundreds of interrupted runs of a real, sleeping agent, against B's latency
 * on the same idle stack, in the same run. Default caps: A's runs beyond TREEWARDEN_COMPANY_MAX_RUNNING_RUNS wait for
 * their company, so B finds a free worker slot, and fairness puts B's tasks ahead of A's backlog.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { seedCompany, settled, type Harness } from '../testing/harness';
import { startInterruptedHold } from './release-fanout';
import { log, row, summarize, type ResultRow } from './support';

const MEMBERS = 1000;
const WAKES = 5;
/** each of A's resumed agents holds a worker slot this long */
const AGENT_SECONDS = '10';

type Company = Awaited<ReturnType<typeof seedCompany>>;

/** One wake of B: milliseconds from the request until its run was claimed. */
async function wakeToRun(h: Harness, b: Company, agentId: string): Promise<number> {
  const issue = await b.issue({ title: 'one wake', assigneeAgentId: agentId });
  const requestedAt = Date.now();
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, b.token, {});
  if (wake.status !== 202) throw new Error(`scenario 9: wake ${JSON.stringify(wake.body)}`);
  const run = await settled(h, wake.body.runId as string, 300_000);
  return run.startedAt!.getTime() - requestedAt;
}

export async function fairness(h: Harness, pool: pg.Pool): Promise<ResultRow[]> {
  const a = await seedCompany(h, 'Releasing');
  const agentA = await a.agent({ type: 'process', command: 'sleep', args: [AGENT_SECONDS] });
  const b = await seedCompany(h, 'Waking');
  const agentB = (await b.agent()).id;
  const idle: number[] = [];
  for (let i = 0; i < WAKES; i++) idle.push(await wakeToRun(h, b, agentB));

  const hold = await startInterruptedHold(h, pool, a.companyId, agentA.id, MEMBERS);
  const actor = { kind: 'system' as const, companyId: a.companyId };
  const release = { holdId: hold.holdId, releaseId: randomUUID(), wakeAgents: false, actor };
  let releasing = true;
  const released = h.services.orchestrator.releaseHold(release).finally(() => (releasing = false));
  const during: number[] = [];
  // B's wakes while A's release dispatches; then while A's backlog drains
  while (during.length < WAKES) during.push(await wakeToRun(h, b, agentB));
  const duringRelease = releasing;
  const report = await released;
  log(`  ${report.resumed.length} resumed; B's wakes all measured ${duringRelease ? 'during' : 'partly after'} it`);
  await Promise.all(report.resumed.map(({ runId }) => settled(h, runId, 600_000)));
  const ratio = summarize(during).median / summarize(idle).median;
  return [
    row('9', "B's wake to run, idle stack", 'ms', idle),
    row('9', `B's wake to run, during A's ${MEMBERS}-member release`, 'ms', during),
    row('9', 'during / idle (medians)', '×', [ratio], { text: '≤ 2×', ok: (m) => m <= 2 }),
  ];
}
