/**
 * Scenario 8's token passes (issue 26): the API CPU one request costs on the two reads made most often, measured
 * with autocannon (bench/autocannon.ts) so the load generator costs the box little. A board token lists its
 * company's issues, as a main app's board does each time it refreshes; a run token reads its own issue
 * (TREEWARDEN_ISSUE_ID), as an agent does on its hot path. The run is real: a `process` agent woken through the API,
 * which writes its token to a file and sleeps until the passes are over, when the bench stops it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isTerminalRunStatus } from '../domain/statuses';
import { eventually } from '../testing/harness';
import { callApi, type ServiceStack } from '../testing/service-stack';
import { autocannonPass, type LoadPass } from './autocannon';
import { log, row, type ResultRow } from './support';

const CONNECTIONS = 32;
const SECONDS = 15;
const WARM_UP_SECONDS = 3;
const REPEATS = 2;
const BOARD_ISSUES = 20;

type Stack = Pick<ServiceStack, 'apiUrl' | 'adminToken'>;

async function call(stack: Stack, method: string, url: string, token: string, status: number, body?: unknown) {
  const response = await callApi(stack.apiUrl, method, url, token, body);
  if (response.status !== status)
    throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(response.body)}, expected ${status}`);
  return response.body;
}

interface TokenWorld {
  boardToken: string;
  boardListUrl: string;
  runToken: string;
  runIssueUrl: string;
  runId: string;
}

/** A company with a board of BOARD_ISSUES issues, one of them assigned to a sleeping agent's running run. */
async function tokenWorld(stack: Stack): Promise<TokenWorld> {
  const company = await call(stack, 'POST', '/api/companies', stack.adminToken, 201, { name: 'token passes' });
  const boardToken: string = company.boardToken;
  // outside the data folder (TREEWARDEN_DATA_DIR), which the agent's sandbox hides from it
  const tokenFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tw-bench-token-')), 'run-token');
  const agent = await call(stack, 'POST', `/api/companies/${company.id}/agents`, boardToken, 201, {
    name: 'sleeper',
    adapter: {
      type: 'process',
      command: 'sh',
      // written whole, then renamed: the bench never reads half a token
      args: ['-c', 'printf %s "$TREEWARDEN_RUN_TOKEN" > "$OUT.part" && mv "$OUT.part" "$OUT" && exec sleep 600'],
      env: { OUT: tokenFile },
    },
  });
  const issues = [];
  for (let n = 0; n < BOARD_ISSUES; n++)
    issues.push(
      await call(stack, 'POST', `/api/companies/${company.id}/issues`, boardToken, 201, {
        title: `board issue ${n}`,
        assigneeAgentId: agent.id,
      }),
    );
  const runIssueId: string = issues[0].id;
  await call(stack, 'POST', `/api/issues/${runIssueId}/wake`, boardToken, 202, {});
  const runToken = await eventually(
    'the run token',
    async () => fs.existsSync(tokenFile) && fs.readFileSync(tokenFile, 'utf8'),
    60_000,
  );
  const runs = await call(stack, 'GET', `/api/issues/${runIssueId}/runs`, boardToken, 200);
  return {
    boardToken,
    boardListUrl: `${stack.apiUrl}/api/companies/${company.id}/issues`,
    runToken,
    runIssueUrl: `${stack.apiUrl}/api/issues/${runIssueId}`,
    runId: runs.items[0].id,
  };
}

async function stopRun(stack: Stack, world: TokenWorld): Promise<void> {
  await call(stack, 'POST', `/api/runs/${world.runId}/stop`, world.boardToken, 200);
  await eventually('the sleeping run ended', async () =>
    isTerminalRunStatus((await call(stack, 'GET', `/api/runs/${world.runId}`, world.boardToken, 200)).status),
  );
}

/** A warm-up, then REPEATS timed passes of GET `url` with `token`, as result rows. */
async function measured(label: string, url: string, token: string, apiPid: number): Promise<ResultRow[]> {
  await autocannonPass(url, token, apiPid, CONNECTIONS, WARM_UP_SECONDS);
  const result: LoadPass[] = [];
  for (let r = 0; r < REPEATS; r++) result.push(await autocannonPass(url, token, apiPid, CONNECTIONS, SECONDS));
  const describe = (p: LoadPass) =>
    `${p.requestsPerSecond.toFixed(0)} req/s, p50 ${p.p50} ms, p99 ${p.p99} ms, CPU ms/request: ` +
    `API ${p.apiCpuPerRequest.toFixed(2)}, autocannon ${p.generatorCpuPerRequest.toFixed(2)}`;
  log(`  ${label}: ${result.map(describe).join('; ')}`);
  const s = `8 API, autocannon ${CONNECTIONS} connections, ${label}`;
  const of = (key: keyof LoadPass) => result.map((p) => p[key]);
  return [
    row(s, 'embedded default: requests/s', 'req/s', of('requestsPerSecond')),
    row(s, 'embedded default: p50', 'ms', of('p50')),
    row(s, 'embedded default: p99', 'ms', of('p99')),
    row(s, 'embedded default: API CPU per request', 'ms', of('apiCpuPerRequest'), {
      text: '≤ 2 ms',
      ok: (m) => m <= 2,
    }),
    row(s, 'embedded default: autocannon CPU per request', 'ms', of('generatorCpuPerRequest')),
  ];
}

/** Both passes on a started stack whose API process is `apiPid`; the run they made is stopped before returning. */
export async function tokenLoad(stack: Stack, apiPid: number): Promise<ResultRow[]> {
  const world = await tokenWorld(stack);
  try {
    const board = await measured('board token, issue list', world.boardListUrl, world.boardToken, apiPid);
    return [...board, ...(await measured('run token, own issue', world.runIssueUrl, world.runToken, apiPid))];
  } finally {
    await stopRun(stack, world);
  }
}
