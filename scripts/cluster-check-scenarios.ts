/** The cluster check's scenarios, through the HTTP API against two workers on two simulated hosts. */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTreewardenClient, TreewardenApiError, type TreewardenClient } from '../client';
import { workflowId } from '../domain/ids';
import { subtreeChangedSignal } from '../workflows/definitions';
import { subtreeChangeReasons } from '../testing/change-signals';
import { hostQueue } from '../domain/task-queue';
import { Client } from '@temporalio/client';
import { connectClient, type TemporalTarget } from '../temporal/connection';
import { rolloutStatus } from '../temporal/rollout';
import type { SimulatedHost } from '../testing/simulated-hosts';
import { check, cleanups, say, waitFor, type Proc } from './cluster-check-support';

/** The host id a worker logged when it started. */
export const hostIdOf = (worker: Proc): string => (JSON.parse(worker.readyLine!) as { hostId: string }).hostId;

export async function runScenario(
  apiUrl: string,
  adminToken: string,
  temporal: TemporalTarget,
  taskQueue: string,
  workers: Proc[],
  hosts: SimulatedHost[],
): Promise<{ watchdogWorkflowId: string }> {
  // Both workers poll the one task queue (scaling out is just more of them), and each its own host's queue.
  const hostIds = workers.map(hostIdOf);
  check(new Set(hostIds).size === 2, 'the two workers are on two hosts', hostIds);
  await waitFor('each worker polling the task queue and its host queue', async () => {
    const connection = await connectClient(temporal);
    const pollersOf = async (name: string, taskQueueType: number) =>
      (
        (
          await connection.workflowService.describeTaskQueue({
            namespace: temporal.namespace,
            taskQueue: { name },
            taskQueueType,
          })
        ).pollers ?? []
      ).map((p) => p.identity ?? '');
    try {
      // Temporal's default identity is <pid>@<hostname>: the pid inside the host, the host's UTS name
      const shared = await pollersOf(taskQueue, 1 /* WORKFLOW */);
      const onHosts = await Promise.all(hostIds.map((id) => pollersOf(hostQueue(taskQueue, id), 2 /* ACTIVITY */)));
      return hosts.every(
        (host, i) =>
          shared.some((identity) => identity.endsWith(`@${host.name}`)) &&
          onHosts[i].some((identity) => identity.endsWith(`@${host.name}`)),
      );
    } finally {
      await connection.close();
    }
  });
  say(`ok: the workers on ${hosts.map((h) => h.name).join(' and ')} poll ${taskQueue}, and each its own host queue`);
  await versionedFleet(temporal, hosts);

  const admin = createTreewardenClient({ baseUrl: apiUrl, token: adminToken });
  const company = await admin.createCompany({ name: 'Cluster Check Co' });
  const board = createTreewardenClient({ baseUrl: apiUrl, token: company.boardToken });
  say(`company ${company.id} created`);
  const watchedIssueId = await watchdogScenario(board, company.id, temporal);
  await holdScenario(board, company.id);
  return { watchdogWorkflowId: workflowId.taskWatchdog(watchedIssueId) };
}

/**
 * Worker Deployment Versioning on a real server (docs/fleet.md, "Versioned rollouts"): the fleet's first build
 * became current by itself, and both hosts' workers poll as it (the switch to a second build:
 * test/versioned-rollout.test.ts).
 */
async function versionedFleet(temporal: TemporalTarget, hosts: SimulatedHost[]) {
  const connection = await connectClient(temporal);
  try {
    const client = new Client({ connection, namespace: temporal.namespace });
    const status = await waitFor('the first build current, polled by both hosts', async () => {
      const now = await rolloutStatus(client, process.env.TREEWARDEN_DEPLOYMENT_NAME || 'treewarden');
      const current = now.builds.find((b) => b.buildId === now.currentBuildId);
      const polling = hosts.every((host) => current?.workers.some((w) => w.identity.endsWith(`@${host.name}`)));
      return polling ? now : null;
    });
    say(`ok: build ${status.currentBuildId} of deployment ${status.deploymentName} is current, on both hosts`);
  } finally {
    await connection.close();
  }
}

/** A watched subtree at rest: the watchdog wakes its noop agent exactly once; bookkeeping writes do not re-arm it. */
async function watchdogScenario(board: TreewardenClient, companyId: string, temporal: TemporalTarget): Promise<string> {
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
  say(
    `watchdog woke agent ${watcher.id}: review issue ${woken.reviewIssueId}, ` +
      `run ${reviewRuns[0].id} ${reviewRuns[0].status}`,
  );

  // A comment is bookkeeping: it records no change, so it signals nothing (docs/task-watchdog.md, "Changes reach their
  // watchdogs"). A direct change signal then evaluates the same stop again, which must not wake the agent again.
  const before = (await board.getWatchdog(root.id))!.lastEvaluation?.evaluatedAt;
  await board.addComment(leaf.id, 'just a note');
  const connection = await connectClient(temporal);
  const watchdogWorkflow = new Client({ connection, namespace: temporal.namespace }).workflow.getHandle(
    workflowId.taskWatchdog(root.id),
  );
  try {
    await watchdogWorkflow.signal(subtreeChangedSignal, { watchdogId: woken.id, reason: 'cluster-check nudge' });
    const after = await waitFor('an evaluation after the nudge', async () => {
      const w = await board.getWatchdog(root.id);
      return w?.lastEvaluation && w.lastEvaluation.evaluatedAt !== before ? w : null;
    });
    await sleep(2_000); // room for a duplicate to show up
    const final = (await board.getWatchdog(root.id))!;
    const runs = (await board.listRuns(woken.reviewIssueId!)).items;
    check(
      final.triggerCount === 1 && runs.length === 1,
      'the stopped subtree gave exactly one watchdog wake (one review run)',
      { triggerCount: final.triggerCount, runs },
    );
    check(
      runs[0].wakeReason === 'task_watchdog_stopped_subtree' && runs[0].agentId === watcher.id,
      'the wake went to the watchdog agent',
      runs[0],
    );
    const reasons = await subtreeChangeReasons(watchdogWorkflow);
    check(!reasons.some((reason) => reason.includes('comment')), 'the comment signalled the watchdog nothing', reasons);
    say(`last evaluation after the nudge: ${after.lastEvaluation?.state}`);
  } finally {
    await connection.close();
  }
  return root.id;
}

/** A pause stops the running run; the release resumes it exactly once; a second release is refused. */
async function holdScenario(board: TreewardenClient, companyId: string): Promise<void> {
  // the prepare step blocks only on the first run, so the resumed run passes straight through
  const marker = path.join(os.tmpdir(), `tw-cluster-prep-${randomBytes(6).toString('hex')}`);
  cleanups.push({ what: `removed ${marker}`, fn: async () => fs.rmSync(marker, { force: true }) });
  const agent = await board.createAgent(companyId, {
    name: 'builder',
    adapter: {
      type: 'process',
      command: 'true',
      prepare: { command: 'sh', args: ['-c', `test -f ${marker} && exit 0; touch ${marker}; sleep 60 & wait`] },
    },
  });
  const parent = await board.createIssue(companyId, { title: 'release train' });
  const child = await board.createIssue(companyId, {
    title: 'migrate the schema',
    parentId: parent.id,
    assigneeAgentId: agent.id,
    status: 'in_progress',
  });
  const wake = await board.wakeIssue(child.id, {});
  const runId = wake.runId!;
  await waitFor(
    'the run running its prepare step',
    async () => fs.existsSync(marker) && (await board.getRun(runId)).status === 'running',
  );
  say(`run ${runId} running (prepare step blocks)`);

  const hold = await board.pauseTree(parent.id);
  check(
    hold.members.find((m) => m.issueId === child.id)?.interruptedRunId === runId,
    'the pause interrupted the run',
    hold.members,
  );
  const stopped = await waitFor('the interrupted run settled', async () => {
    const run = await board.getRun(runId);
    return ['succeeded', 'failed', 'cancelled'].includes(run.status) ? run : null;
  });
  check(
    stopped.status === 'cancelled' && stopped.stopKind === 'operator_hold' && stopped.stoppedByHoldId === hold.id,
    'the run was cancelled by the hold',
    stopped,
  );

  const released = await board.releaseTreeHold(parent.id, hold.id);
  check(
    released.resumed.length === 1 && released.resumed[0].issueId === child.id,
    'the release resumed one run',
    released,
  );
  const resumed = await waitFor('the resumed run settled', async () => {
    const run = await board.getRun(released.resumed[0].runId);
    return ['succeeded', 'failed', 'cancelled'].includes(run.status) ? run : null;
  });
  check(
    resumed.status === 'succeeded' && resumed.wakeReason === 'issue_tree_resumed',
    'the resumed run succeeded',
    resumed,
  );
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

/**
 * The CLI over the cluster's mTLS, configured by the standard variables alone: with the client certificate it reads
 * the watchdog's workflow; without it the server refuses the connection and the CLI says which variables decide.
 */
export async function cliScenario(env: NodeJS.ProcessEnv, watchdogWorkflowId: string): Promise<void> {
  const cli = (variables: NodeJS.ProcessEnv) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', 'cli/index.ts', 'status', watchdogWorkflowId, '--json', '--connect-timeout', '5000'],
        { cwd: path.join(__dirname, '..'), env: variables, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      ),
    );
  const served = await cli(env);
  check(served.code === 0, 'the CLI reads the watchdog workflow over mTLS', served);
  check(JSON.parse(served.stdout).status === 'RUNNING', 'the watchdog workflow is running', served.stdout);
  const { TEMPORAL_TLS_CLIENT_CERT_PATH: _cert, TEMPORAL_TLS_CLIENT_KEY_PATH: _key, ...withoutCertificate } = env;
  const refused = await cli(withoutCertificate);
  check(
    refused.code === 1 && refused.stderr.includes('cannot reach Temporal') && refused.stderr.includes('TEMPORAL_TLS_*'),
    'without the client certificate the connection is refused, naming the TLS variables',
    refused,
  );
  say(`ok: the CLI over mTLS; without the client certificate: ${refused.stderr.trim().split('\n')[0]}`);
}
