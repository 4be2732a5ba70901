/**
 * The hostile agent of the sandbox's tests (issue 43): a shell script that looks where an attacker would, and what
 * its output must show. Its sections (`== agent: runs`, `== child: ports`, …) are read back by `expectConfined`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../../testing/harness';
import { callApi } from '../../testing/service-stack';

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

/** The variables the script reads, for an agent's adapter `env`. */
export interface HostileTargets {
  /** the service's data folder */
  DATA: string;
  /** every run's folder is in it */
  RUNS: string;
  /** the run whose token and folder it must not reach */
  VICTIM: string;
  /** a folder of its own for its attempts (a `/proc` mount) */
  SCRATCH: string;
  TEMPORAL_PORT: string;
  PG_PORT: string;
  METRICS_PORT: string;
}

/** What the victim's agent runs: it keeps its token in its own run folder, where the test (not the hostile) reads it. */
export const VICTIM_AGENT = 'echo "$TREEWARDEN_RUN_TOKEN" > "$(dirname "$TREEWARDEN_JOURNAL_FILE")/token"; sleep 600';

/** The victim's token, once its agent wrote it into its run folder `runDir`. */
export const victimToken = (runDir: string) =>
  eventually('the victim holds its token', async () => {
    try {
      return readFileSync(`${runDir}/token`, 'utf8').trim();
    } catch {
      return null;
    }
  });

/**
 * The hostile agent's output shows no secret, only its own run folder (never the victim's), every internal port
 * refused directly and through the proxy, its own API call answered, and the supervisor's records unwritable.
 */
export function expectConfined(
  seen: string,
  what: { secrets: Record<string, string>; targets: HostileTargets; ownRunId: string },
): void {
  expect(seen).toContain('== done');
  for (const [name, secret] of Object.entries(what.secrets))
    expect({ name, found: seen.includes(secret) }).toEqual({ name, found: false });
  const { targets } = what;
  for (const round of ['agent', 'child']) {
    const runs = section(seen, `${round}: runs`);
    expect(runs).not.toContain(targets.VICTIM);
    expect(runs).toContain(what.ownRunId);
    const ports = section(seen, `${round}: ports`);
    for (const port of [targets.TEMPORAL_PORT, targets.PG_PORT, targets.METRICS_PORT]) {
      expect(ports).toContain(`port ${port}: 7`); // curl: could not connect
      expect(ports).toContain(`403 proxied ${port}`);
      expect(ports).not.toMatch(new RegExp(`tunnelled ${port}: 0\\b`));
    }
    expect(section(seen, `${round}: own API`)).toContain('api 201');
  }
  // the records it tried to forge are the supervisor's: the exit status is its start shell's
  expect(section(seen, 'agent: records')).toMatch(/Permission denied|Read-only/);
}

/** The lines of the agent's output under `== <name>`, up to the next section. */
function section(output: string, name: string): string {
  const start = output.indexOf(`== ${name}\n`);
  expect(start).toBeGreaterThanOrEqual(0);
  const end = output.indexOf('\n== ', start + 1);
  return output.slice(start, end === -1 ? undefined : end);
}

/** A new company with one `process` agent running `script` (and `env`) on one issue, woken through the API. */
export async function companyWithRunningAgent(
  apiUrl: string,
  adminToken: string,
  name: string,
  script: string,
  env: Record<string, string>,
) {
  const call = (method: string, url: string, token: string, body?: unknown) =>
    callApi(apiUrl, method, url, token, body);
  const company = (await call('POST', '/api/companies', adminToken, { name })).body;
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

/**
 * The hostile agent woken in a company of its own, aimed at `targets`, until its run settles (`statusOf` reads the
 * run's row): its run id, its row and everything it printed.
 */
export async function hostileRun<Row extends { status: string }>(
  apiUrl: string,
  adminToken: string,
  targets: HostileTargets,
  statusOf: (runId: string) => Promise<Row>,
) {
  const script = join(targets.SCRATCH, 'hostile.sh');
  writeFileSync(script, HOSTILE, { mode: 0o644 });
  const { runId } = await companyWithRunningAgent(apiUrl, adminToken, 'hostile', `sh ${script}`, { ...targets });
  const settled = await eventually(
    'the hostile run settles',
    async () => {
      const run = await statusOf(runId);
      return run.status !== 'queued' && run.status !== 'running' ? run : null;
    },
    120_000,
  );
  return { runId, settled, seen: readFileSync(join(targets.RUNS, runId, 'output.log'), 'utf8') };
}
