/**
 * @module Runs do not inherit the worker's secrets (issue 13, item 2): a real worker process holding
 * DATABASE_URL and TREEWARDEN_ADMIN_TOKEN runs an agent's shell script and the shell job it starts;
 * from inside, neither secret is in the environment and the admin API refuses what the run has.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { ADMIN_TOKEN, eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { workerFleet, type WorkerFleet } from '../testing/worker-fleet';

let h: Harness;
let fleet: WorkerFleet;
beforeAll(async () => {
  h = await startHarness({}, { inProcessWorker: false });
  fleet = workerFleet(h);
  // the worker's environment: the service's secrets, one variable configured to pass, one not
  await fleet.start({
    TREEWARDEN_RUN_ENV_PASSTHROUGH: 'TW_TEST_PASSED',
    TW_TEST_PASSED: 'passed',
    TW_TEST_UNLISTED: 'unlisted',
  });
});
afterAll(async () => {
  await fleet?.close();
  await h?.close();
});

const parseEnv = (text: string) =>
  Object.fromEntries(
    text
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

test('a process run and its shell job see neither secret, and the admin API refuses the run', async () => {
  expect(h.env.DATABASE_URL).toBeTruthy();
  expect(h.env.TREEWARDEN_ADMIN_TOKEN).toBe(ADMIN_TOKEN);
  const out = `/tmp/tw-run-env-${randomBytes(6).toString('hex')}`;
  mkdirSync(out);
  const post = (token: string, file: string) =>
    `curl -s -o /dev/null -w '%{http_code}' -X POST -H "authorization: Bearer ${token}" -H 'content-type: application/json' -d '{"name":"taken over"}' "$TREEWARDEN_API_URL/api/companies" > ${out}/${file}`;
  const job = JSON.stringify({ kind: 'shell_job', command: 'sh', args: ['-c', `env > ${out}/job.env`] });
  const script = [
    `env > ${out}/run.env`,
    post('$TREEWARDEN_RUN_TOKEN', 'with-run-token'),
    post('$TREEWARDEN_ADMIN_TOKEN', 'with-env-admin-token'),
    `curl -sf -X POST -H "authorization: Bearer $TREEWARDEN_RUN_TOKEN" -H 'content-type: application/json' -d '${job}' "$TREEWARDEN_API_URL/api/runs/$TREEWARDEN_RUN_ID/jobs" > /dev/null`,
    `for i in $(seq 100); do test -s ${out}/job.env && exit 0; sleep 0.1; done; exit 1`,
  ].join('\n');
  const c = await seedCompany(h);
  const agent = await c.agent({
    type: 'process',
    command: 'sh',
    args: ['-c', script],
    env: { AGENT_SETTING: 'from-adapter' },
  });
  const issue = await c.issue({ title: 'dump the environment', assigneeAgentId: agent.id });
  const wake = await h.request('POST', `/api/issues/${issue.id}/wake`, c.token, {});
  expect(wake.status).toBe(202);
  const run = await eventually('the run settled', async () => {
    const r = await h.services.db.run.findUniqueOrThrow({ where: { id: wake.body.runId } });
    return ['succeeded', 'failed', 'cancelled'].includes(r.status) ? r : null;
  });
  expect(existsSync(`${out}/job.env`)).toBe(true);
  expect(run.status).toBe('succeeded');

  const runEnv = parseEnv(readFileSync(`${out}/run.env`, 'utf8'));
  const jobEnv = parseEnv(readFileSync(`${out}/job.env`, 'utf8'));
  for (const env of [runEnv, jobEnv]) {
    expect(env).not.toHaveProperty('DATABASE_URL');
    expect(env).not.toHaveProperty('TREEWARDEN_ADMIN_TOKEN');
    expect(env).not.toHaveProperty('TW_TEST_UNLISTED');
    expect(Object.values(env)).not.toContain(ADMIN_TOKEN);
    expect(Object.values(env)).not.toContain(h.env.DATABASE_URL);
    expect(env).toMatchObject({ TW_TEST_PASSED: 'passed', AGENT_SETTING: 'from-adapter' });
    expect(env.PATH).toBeTruthy();
  }
  expect(runEnv).toMatchObject({ TREEWARDEN_RUN_ID: run.id, TREEWARDEN_ISSUE_ID: issue.id });
  expect(jobEnv).toMatchObject({ TREEWARDEN_OWNER_RUN_ID: run.id });
  expect(runEnv.TREEWARDEN_RUN_TOKEN).toMatch(/^twr_/);
  // the admin API: the run token is refused, and there is no admin token to try
  expect(readFileSync(`${out}/with-run-token`, 'utf8')).toBe('403');
  expect(readFileSync(`${out}/with-env-admin-token`, 'utf8')).toBe('401');
  expect(await h.services.db.company.count({ where: { name: 'taken over' } })).toBe(0);
});
