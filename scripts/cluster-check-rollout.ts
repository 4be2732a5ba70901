/**
 * The cluster check's rollout (issue 27): "Versioned rollouts" of docs/fleet.md on the real server. Build 1 (the
 * fleet's first build, current by itself) runs an agent and a watchdog; build 2 starts on one host beside it and is
 * promoted with `treewarden rollout promote`; the run started on build 1 stays pinned there and finishes, new runs
 * start on build 2, the watchdog moves to build 2 with its reviewed stop and wakes once for a new one, and once
 * `rollout wait-drained` says build 1 is no longer needed its workers stop and build 2 alone serves.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { createTreewardenClient } from '../client';
import { workflowId } from '../domain/ids';
import { connectClient, type TemporalTarget } from '../temporal/connection';
import { rolloutStatus } from '../temporal/rollout';
import type { SimulatedHost } from '../testing/simulated-hosts';
import { check, say, startProcess, waitFor, type Proc } from './cluster-check-support';

interface RolloutSetup {
  apiUrl: string;
  adminToken: string;
  env: NodeJS.ProcessEnv;
  temporal: TemporalTarget;
  dir: string;
  hosts: SimulatedHost[];
  workers: Proc[];
  workerReady: (line: string) => boolean;
}

export async function rolloutScenario(setup: RolloutSetup): Promise<void> {
  const connection = await connectClient(setup.temporal);
  const client = new Client({ connection, namespace: setup.temporal.namespace });
  // The agent's gate sits outside the data folder (TREEWARDEN_DATA_DIR): the agent's sandbox hides that folder.
  const gateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tw-rollout-gate-'));
  try {
    await rollout(setup, client, gateDir);
  } finally {
    await connection.close();
    fs.rmSync(gateDir, { recursive: true, force: true });
  }
}

async function rollout(setup: RolloutSetup, client: Client, gateDir: string) {
  const deployment = setup.env.TREEWARDEN_DEPLOYMENT_NAME || 'treewarden';
  const build1 = (await rolloutStatus(client, deployment)).currentBuildId!;
  const admin = createTreewardenClient({ baseUrl: setup.apiUrl, token: setup.adminToken });
  const company = await admin.createCompany({ name: 'Rollout Co' });
  const board = createTreewardenClient({ baseUrl: setup.apiUrl, token: company.boardToken });

  // on build 1: an agent that runs until the check opens its gate, and a watchdog that has woken for one stop
  const gate = path.join(gateDir, 'open');
  const gated = await board.createAgent(company.id, {
    name: 'long-agent',
    adapter: { type: 'process', command: 'sh', args: ['-c', `while [ ! -e ${gate} ]; do sleep 0.2; done`] },
  });
  const gatedIssue = await board.createIssue(company.id, { title: 'a long agent', assigneeAgentId: gated.id });
  const oldRunId = (await board.wakeIssue(gatedIssue.id, {})).runId!;
  await waitFor('the long run running on build 1', async () => (await board.getRun(oldRunId)).status === 'running');
  const watcher = await board.createAgent(company.id, { name: 'rollout-reviewer', adapter: { type: 'noop' } });
  const root = await board.createIssue(company.id, { title: 'watched across the rollout' });
  const leaf = await board.createIssue(company.id, { title: 'leaf', parentId: root.id, status: 'done' });
  await board.putWatchdog(root.id, { agentId: watcher.id });
  const wakes = async () => (await board.getWatchdog(root.id))?.triggerCount ?? 0;
  await waitFor('the watchdog woken once on build 1', async () => (await wakes()) === 1);

  // build 2 beside build 1, then promoted
  const build2 = await startProcess(
    'worker-build-2',
    'workers/main.ts',
    { ...setup.env, TREEWARDEN_BUILD_ID: 'build-2' },
    setup.dir,
    setup.workerReady,
    setup.hosts[0],
  );
  await waitFor('build 2 polling', async () =>
    (await rolloutStatus(client, deployment)).builds.some((b) => b.buildId === 'build-2' && b.workers.length > 0),
  );
  const promoted = await cli(setup.env, ['rollout', 'promote', 'build-2']);
  check(promoted.code === 0, 'treewarden rollout promote build-2', promoted);
  check((await rolloutStatus(client, deployment)).currentBuildId === 'build-2', 'build 2 is current', build1);
  say(`ok: build 2 promoted over ${build1}`);

  const fresh = await board.createIssue(company.id, {
    title: 'after the switch',
    assigneeAgentId: (await board.createAgent(company.id, { name: 'fresh', adapter: { type: 'noop' } })).id,
  });
  const newRunId = (await board.wakeIssue(fresh.id, {})).runId!;
  await waitFor('the new run settled', async () => (await board.getRun(newRunId)).status === 'succeeded');
  check((await buildOf(client, workflowId.agentRun(newRunId))) === 'build-2', 'a new run started on build 2', newRunId);
  check((await buildOf(client, workflowId.agentRun(oldRunId))) === build1, 'the old run stays on build 1', oldRunId);

  await board.updateIssue(leaf.id, { status: 'blocked', blockedReason: 'waiting for the rollout check' });
  await waitFor('one wake for the new stop', async () => (await wakes()) === 2);
  await waitFor(
    'the watchdog on build 2',
    async () => (await buildOf(client, workflowId.taskWatchdog(root.id))) === 'build-2',
  );
  say('ok: new runs on build 2, the old run pinned to build 1, the watchdog moved and woke once for a new stop');

  const drained = cli(setup.env, ['rollout', 'wait-drained', build1, '--timeout', '120000']);
  fs.writeFileSync(gate, '');
  await waitFor('the old run finished on build 1', async () => (await board.getRun(oldRunId)).status === 'succeeded');
  check((await drained).code === 0, 'rollout wait-drained: nothing pinned to build 1 runs', build1);
  for (const worker of setup.workers) {
    await worker.signal('SIGTERM');
    await worker.exited;
    check(worker.child.exitCode === 0, `${worker.name} drained and exited 0`, worker.child.exitCode);
  }
  const last = await board.createIssue(company.id, { title: 'build 2 alone', assigneeAgentId: gated.id });
  const lastRunId = (await board.wakeIssue(last.id, {})).runId!;
  await waitFor('build 2 alone serves a run', async () => (await board.getRun(lastRunId)).status === 'succeeded');
  check((await wakes()) === 2, 'the watchdog woke for nothing else', await wakes());
  say(`ok: build 1's workers stopped after the drain; build 2 (pid ${build2.child.pid}) serves alone`);
}

async function buildOf(client: Client, id: string): Promise<string | null> {
  const described = await client.workflow.getHandle(id).describe();
  return described.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId ?? null;
}

function cli(env: NodeJS.ProcessEnv, args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      ['--import', 'tsx', 'cli/index.ts', ...args, '--json'],
      { cwd: path.join(__dirname, '..'), env, timeout: 180_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    ),
  );
}
