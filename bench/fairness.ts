/**
 * Scenario 9 (issue 30): company B's wake-to-run latency (the wake's request until its run's claim, `startedAt`)
 * while company A's release re-dispatches 1,000 interrupted runs of a real, sleeping agent, against B's latency on
 * the same idle stack, in the same run. It runs on the stack `npm start` builds (worker and API as processes of their
 * own, the embedded PostgreSQL), driven over HTTP as a main app drives it: the bench's event loop hosts neither the
 * release nor A's runs. Default caps: A's runs beyond TREEWARDEN_COMPANY_MAX_RUNNING_RUNS wait for their company,
 * so B finds a free worker slot, and fairness puts B's tasks ahead of A's backlog.
 */
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { tsToMs } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import pg from 'pg';
import { parseConfig } from '../domain/config';
import { createTemporalOrchestrator } from '../temporal/temporal-orchestrator';
import { callApi, embeddedDatabaseUrl, startServiceStack, type ServiceStack } from '../testing/service-stack';
import { seedInterruptedHold } from './release-fanout';
import { eventually } from '../testing/harness';
import { log, row, summarize, type ResultRow } from './support';

const MEMBERS = 1000;
/** enough wakes that one slow outlier (a cold first request) does not move the median */
const WAKES = 15;
/** each of A's resumed agents holds a worker slot this long */
const AGENT_SECONDS = '10';

interface Company {
  id: string;
  token: string;
  agentId: string;
}

async function api(stack: ServiceStack, token: string, method: string, url: string, body: unknown, status: number) {
  const response = await callApi(stack.apiUrl, method, url, token, body);
  if (response.status !== status)
    throw new Error(`scenario 9: ${method} ${url} answered ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/**
 * A's release over HTTP. It answers once its 1,000 resumes are dispatched, which on a busy 2-core host (A's resumed
 * agents starting in their sandboxes beside it) outlasts fetch's 300 s wait for an answer's headers; node:http has no
 * such wait.
 */
function release(stack: ServiceStack, token: string, url: string): Promise<{ resumed?: unknown[] }> {
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const request = http.request(`${stack.apiUrl}${url}`, { method: 'POST', headers }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        response.statusCode === 200
          ? resolve(JSON.parse(text))
          : reject(new Error(`scenario 9: the release answered ${response.statusCode} ${text}`)),
      );
    });
    request.on('error', reject);
    request.end('{}');
  });
}

async function company(stack: ServiceStack, name: string, adapter: unknown): Promise<Company> {
  const created = await api(stack, stack.adminToken, 'POST', '/api/companies', { name }, 201);
  const agent = await api(
    stack,
    created.boardToken,
    'POST',
    `/api/companies/${created.id}/agents`,
    { name, adapter },
    201,
  );
  return { id: created.id, token: created.boardToken, agentId: agent.id };
}

const STAGES = {
  answered: '202 answer',
  runWritten: 'run row written',
  workflowStarted: "run's workflow started",
  firstTaskStarted: 'its first workflow task picked up',
  claimScheduled: 'claim activity scheduled',
  claimStarted: 'claim activity picked up',
  claimCompleted: 'claim activity completed',
} as const;

/**
 * One wake of B, in milliseconds from its request: answered (202), its run's row written, its run claimed, and from
 * the run's workflow history the steps between the row and the claim.
 */
type WakeTimes = Record<keyof typeof STAGES | 'claimed', number>;

type HistoryStage = Exclude<keyof typeof STAGES, 'answered' | 'runWritten'>;

/**
 * The first event of each step between a run's row and its claim, as ms since `requestedAt`. The claim's row is
 * written inside its activity, so its completion may reach the history a moment after; the started event is
 * written with the completion (recorded with its own time).
 */
async function runWorkflowSteps(
  client: TemporalClient,
  runId: string,
  requestedAt: number,
): Promise<Record<HistoryStage, number>> {
  const handle = client.workflow.getHandle(`agent-run:${runId}`);
  const events = await eventually(`agent-run:${runId} to record its claim`, async () => {
    const { events } = await handle.fetchHistory();
    return events?.some((e) => e.activityTaskCompletedEventAttributes) ? events : null;
  });
  const first = (has: (e: temporal.api.history.v1.IHistoryEvent) => unknown): number =>
    tsToMs(events.find((e) => has(e))!.eventTime) - requestedAt;
  return {
    workflowStarted: first((e) => e.workflowExecutionStartedEventAttributes),
    firstTaskStarted: first((e) => e.workflowTaskStartedEventAttributes),
    claimScheduled: first((e) => e.activityTaskScheduledEventAttributes),
    claimStarted: first((e) => e.activityTaskStartedEventAttributes),
    claimCompleted: first((e) => e.activityTaskCompletedEventAttributes),
  };
}

async function wakeToRun(stack: ServiceStack, pool: pg.Pool, client: TemporalClient, b: Company): Promise<WakeTimes> {
  const issue = await api(
    stack,
    b.token,
    'POST',
    `/api/companies/${b.id}/issues`,
    { title: 'one wake', assigneeAgentId: b.agentId },
    201,
  );
  const requestedAt = Date.now();
  const wake = await api(stack, b.token, 'POST', `/api/issues/${issue.id}/wake`, {}, 202);
  const answered = Date.now() - requestedAt;
  for (const deadline = Date.now() + 300_000; Date.now() < deadline; await sleep(20)) {
    const { rows } = await pool.query<{ createdAt: Date; startedAt: Date | null }>(
      `SELECT "createdAt", "startedAt" FROM "Run" WHERE id = $1`,
      [wake.runId],
    );
    const run = rows[0];
    if (run?.startedAt)
      return {
        answered,
        runWritten: run.createdAt.getTime() - requestedAt,
        ...(await runWorkflowSteps(client, wake.runId, requestedAt)),
        claimed: run.startedAt.getTime() - requestedAt,
      };
  }
  throw new Error(`scenario 9: B's run ${wake.runId} did not start within five minutes`);
}

export async function fairness(temporalAddress: string, namespace: string): Promise<ResultRow[]> {
  const taskQueue = `bench-fairness-${randomBytes(4).toString('hex')}`;
  const stack = await startServiceStack({ temporalAddress, env: { TREEWARDEN_TASK_QUEUE: taskQueue } });
  const databaseUrl = embeddedDatabaseUrl(stack);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const connection = await Connection.connect({ address: temporalAddress });
  const temporal = new TemporalClient({ connection, namespace });
  try {
    const a = await company(stack, 'Releasing', { type: 'process', command: 'sleep', args: [AGENT_SECONDS] });
    const b = await company(stack, 'Waking', { type: 'noop' });
    const idle: WakeTimes[] = [];
    for (let i = 0; i < WAKES; i++) idle.push(await wakeToRun(stack, pool, temporal, b));

    // the state A's pause left behind (seeded: 1,000 really running agents to pause would measure the pause too),
    // its hold workflow started on the stack's task queue as the pause starts it
    const hold = await seedInterruptedHold(pool, a.id, a.agentId, MEMBERS);
    await pool.query('ANALYZE');
    const config = parseConfig({ DATABASE_URL: databaseUrl, TREEWARDEN_TASK_QUEUE: taskQueue });
    const orchestrator = createTemporalOrchestrator(temporal, config);
    await orchestrator.startHold({ holdId: hold.holdId, companyId: a.id, rootIssueId: hold.rootId, title: 'release' });

    let releasing = true;
    const releaseStarted = Date.now();
    const released = release(stack, a.token, `/api/issues/${hold.rootId}/tree-holds/${hold.holdId}/release`).finally(
      () => (releasing = false),
    );
    // a failed release fails the scenario where it is awaited, not the process while B's wakes run
    released.catch(() => {});
    const during: WakeTimes[] = [];
    while (during.length < WAKES) during.push(await wakeToRun(stack, pool, temporal, b));
    const duringRelease = releasing;
    const report = await released;
    log(
      `  ${report.resumed?.length ?? '?'} resumed in ${Date.now() - releaseStarted} ms; ` +
        `B's wakes measured ${duringRelease ? 'during' : 'partly after'} it`,
    );
    const claimed = (times: WakeTimes[]) => times.map((t) => t.claimed);
    const ratio = summarize(claimed(during)).median / summarize(claimed(idle)).median;
    return [
      row('9', "B's wake to run, idle stack", 'ms', claimed(idle), undefined, 'npm start stack, driven over HTTP'),
      row('9', `B's wake to run, during A's ${MEMBERS}-member release`, 'ms', claimed(during)),
      row('9', 'during / idle (medians)', '×', [ratio], { text: '≤ 2×', ok: (m) => m <= 2 }),
      // where a wake's time goes: the API's answer, the run's row, its workflow's steps, then (above) its claim
      ...Object.entries(STAGES).flatMap(([stage, name]) => [
        row(
          '9',
          `B's wake, request to ${name}, idle`,
          'ms',
          idle.map((t) => t[stage as keyof WakeTimes]),
        ),
        row(
          '9',
          `B's wake, request to ${name}, during`,
          'ms',
          during.map((t) => t[stage as keyof WakeTimes]),
        ),
      ]),
    ];
  } catch (error) {
    log(`scenario 9 failed; the stack's last output:\n${stack.output().slice(-4000)}`);
    throw error;
  } finally {
    await connection.close();
    await pool.end();
    await stack.stop();
  }
}
