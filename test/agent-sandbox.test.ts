/**
 * @module The agent sandbox (issue 43) against a hostile agent, on the stack `npm start` builds (its own worker and
 * API processes, the embedded PostgreSQL, run as root like the README's), with the admin token given as a variable.
 * The agent looks where an attacker would: the data folder, every `/proc/<pid>/environ`, the other runs' folders,
 * the internal ports (the Temporal frontend, PostgreSQL, the worker's metrics), directly and through the proxy; then
 * a child of it tries again after `setsid`, `unshare`, `nsenter`, a new `/proc` and every setuid binary. It finds
 * no secret and no other run's token, every connection but the API's fails, and the API still works with its own
 * token. A second company's run is running meanwhile: its token is the one an attacker wants.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../scripts/provision/ports';
import { eventually } from '../testing/harness';
import { callApi, embeddedDatabaseUrl, stackSql, startServiceStack, type ServiceStack } from '../testing/service-stack';
import { testTemporal } from '../testing/stack';
import { runFiles, runFilesRoot } from '../runs/run-files';

const ADMIN_TOKEN = `twa_${randomBytes(24).toString('base64url')}`;
let stack: ServiceStack;
let metricsPort: number;
let scratch: string;

beforeAll(async () => {
  metricsPort = await freePort();
  scratch = mkdtempSync(join(tmpdir(), 'tw-hostile-'));
  stack = await startServiceStack({
    temporalAddress: testTemporal().temporalAddress,
    env: { TREEWARDEN_ADMIN_TOKEN: ADMIN_TOKEN, TREEWARDEN_WORKER_METRICS_PORT: String(metricsPort) },
  });
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(scratch, { recursive: true, force: true });
}, 120_000);

const call = (method: string, url: string, token: string, body?: unknown) =>
  callApi(stack.apiUrl, method, url, token, body);

/** A company with one agent running `script` on one issue, woken; its run id once the run is running. */
async function companyRunning(name: string, script: string, env: Record<string, string> = {}) {
  const company = (await call('POST', '/api/companies', ADMIN_TOKEN, { name })).body;
  const adapter = { type: 'process', command: 'sh', args: ['-c', script], env };
  const agent = (await call('POST', `/api/companies/${company.id}/agents`, company.boardToken, { name, adapter })).body;
  const issue = (
    await call('POST', `/api/companies/${company.id}/issues`, company.boardToken, {
      title: `${name}'s task`,
      assigneeAgentId: agent.id,
    })
  ).body;
  const wake = await call('POST', `/api/issues/${issue.id}/wake`, company.boardToken, {});
  expect(wake.status).toBe(202);
  return { company, issue, runId: wake.body.runId as string };
}

const runOf = async (runId: string) =>
  (
    await stackSql<{ status: string; ownerToken: string | null; exitCode: number | null }>(
      stack,
      'SELECT status, "ownerToken", "exitCode" FROM "Run" WHERE id = $1',
      [runId],
    )
  )[0];

/** What the hostile agent does, once as the agent and once more as a child that tried to get out. */
const HOSTILE = String.raw`
scan() {
  echo "== $1: data folder"; find "$DATA" -type f -exec cat {} + 2>&1 | head -c 200000
  echo "== $1: environments"; for f in /proc/[0-9]*/environ; do tr '\0' '\n' < "$f"; echo; done 2>&1
  echo "== $1: command lines"; for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < "$f"; echo; done 2>&1
  echo "== $1: runs"; ls -a "$RUNS" 2>&1; find "$RUNS" -type f -exec cat {} + 2>&1 | head -c 200000
  cat "$RUNS/$VICTIM/token" 2>&1
  echo "== $1: ports"
  for port in $TEMPORAL_PORT $PG_PORT $METRICS_PORT; do
    curl -s -m 5 -o /dev/null "http://127.0.0.1:$port/"; echo "port $port: $?"
    curl -s -m 5 -o /dev/null -w "%{http_code}" --noproxy "" -x http://127.0.0.1:3128 "http://127.0.0.1:$port/"
    echo " proxied $port"
    curl -s -m 5 -o /dev/null --noproxy "" -p -x http://127.0.0.1:3128 "http://localhost:$port/"; echo "tunnelled $port: $?"
  done
  echo "== $1: records"; echo 0 > "$(dirname "$TREEWARDEN_JOURNAL_FILE")/.supervisor/exit-status" 2>&1
  echo "== $1: own API"
  curl -s -o /dev/null -w "api %{http_code}\n" -X POST -H "authorization: Bearer $TREEWARDEN_RUN_TOKEN" \
    -H 'content-type: application/json' -d '{"body":"still reachable"}' \
    "$TREEWARDEN_API_URL/api/issues/$TREEWARDEN_ISSUE_ID/comments"
}
if [ "$1" = child ]; then scan child; exit 0; fi
scan agent
echo "== escapes"
unshare --user --map-root-user sh "$0" child 2>&1
nsenter --target 1 --all sh "$0" child 2>&1
mkdir -p "$SCRATCH/proc" && mount -t proc proc "$SCRATCH/proc" 2>&1 && ls "$SCRATCH/proc"
for binary in $(find /bin /sbin /usr/bin /usr/sbin /usr/local/bin -perm -4000 -type f 2>/dev/null); do "$binary" -c id 2>&1 | head -2; done
setsid sh "$0" child
echo "== done"
`;

test('a hostile agent on the npm start stack finds no secret and no other token, and reaches nothing but the API', async () => {
  const victim = await companyRunning(
    'victim',
    'echo "$TREEWARDEN_RUN_TOKEN" > "$(dirname "$TREEWARDEN_JOURNAL_FILE")/token"; sleep 600',
  );
  const victimTokenFile = join(runFiles(victim.runId, null).runDir, 'token');
  const victimToken = await eventually('the victim holds its token', async () => {
    try {
      return readFileSync(victimTokenFile, 'utf8').trim();
    } catch {
      return null;
    }
  });
  const script = join(scratch, 'hostile.sh');
  writeFileSync(script, HOSTILE);
  const database = new URL(embeddedDatabaseUrl(stack));
  const hostile = await companyRunning('hostile', `sh ${script}`, {
    DATA: stack.dataDir,
    RUNS: runFilesRoot(),
    VICTIM: victim.runId,
    SCRATCH: scratch,
    TEMPORAL_PORT: testTemporal().temporalAddress.split(':').at(-1)!,
    PG_PORT: database.port,
    METRICS_PORT: String(metricsPort),
  });
  const settled = await eventually(
    'the hostile run settles',
    async () => {
      const run = await runOf(hostile.runId);
      return run.status !== 'queued' && run.status !== 'running' ? run : null;
    },
    120_000,
  );
  const seen = readFileSync(runFiles(hostile.runId, null).output, 'utf8');
  expect(seen).toContain('== done');
  expect(settled).toMatchObject({ status: 'succeeded', exitCode: 0 });

  const demo = JSON.parse(readFileSync(join(stack.dataDir, 'demo.json'), 'utf8')) as { boardToken: string };
  const victimRun = await runOf(victim.runId);
  const secrets = {
    adminToken: ADMIN_TOKEN,
    databasePassword: decodeURIComponent(database.password),
    demoBoardToken: demo.boardToken,
    victimRunToken: victimToken,
    victimOwnerToken: victimRun.ownerToken!,
  };
  for (const [name, secret] of Object.entries(secrets))
    expect({ name, found: seen.includes(secret) }).toEqual({ name, found: false });
  // only its own run folder and the gate are there; the victim's is not
  for (const round of ['agent', 'child']) {
    const runs = section(seen, `${round}: runs`);
    expect(runs).not.toContain(victim.runId);
    expect(runs).toContain(hostile.runId);
    const ports = section(seen, `${round}: ports`);
    for (const port of [testTemporal().temporalAddress.split(':').at(-1), database.port, String(metricsPort)]) {
      expect(ports).toContain(`port ${port}: 7`); // curl: could not connect
      expect(ports).toContain(`403 proxied ${port}`);
      expect(ports).not.toMatch(new RegExp(`tunnelled ${port}: 0\\b`));
    }
    expect(section(seen, `${round}: own API`)).toContain('api 201');
  }
  // the records it tried to forge are the supervisor's: the exit status is its start shell's
  expect(section(seen, 'agent: records')).toMatch(/Permission denied|Read-only/);
  // nothing it did reached the victim's company
  expect(await stackSql(stack, 'SELECT id FROM "Comment" WHERE "issueId" = $1', [victim.issue.id])).toEqual([]);
  expect((await runOf(victim.runId)).status).toBe('running');
  expect((await call('POST', `/api/work/${victim.runId}/stop`, victim.company.boardToken)).status).toBe(200);
}, 240_000);

/** The lines of the agent's output under `== <name>`, up to the next section. */
function section(output: string, name: string): string {
  const start = output.indexOf(`== ${name}\n`);
  expect(start).toBeGreaterThanOrEqual(0);
  const end = output.indexOf('\n== ', start + 1);
  return output.slice(start, end === -1 ? undefined : end);
}
