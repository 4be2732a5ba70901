/**
 * `npm run record:histories`: drives the main path of every workflow type against a real stack (the
 * test stack: a dev server and a fresh PostgreSQL database) and saves each execution's event history
 * under test/histories/. test/replay.test.ts replays them against the current workflow code, so a
 * change that would break running executions fails CI. Re-record after a deliberate, patched change;
 * files it does not write (older recordings kept on purpose) are left alone. Each stack's stories are recorded on a
 * stack of their own configuration; `npm run record:histories -- <stack>...` records only those stacks (`main`,
 * `capped`, `liveness-watch`).
 */
import '../testing/runtime';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import globalSetup from '../testing/global-setup';
import globalTeardown from '../testing/global-teardown';
import { seedCompany, startHarness, type Harness } from '../testing/harness';
import {
  blockerResolved,
  holdInterruptsRun,
  inspectionProbesHost,
  monitorStopsWithOwner,
  retentionPasses,
  runFails,
  runWaitsForCompanyCap,
  watchdogRechecks,
  watchdogWakes,
} from '../testing/scenarios';
import { webhookDelivered, webhookGivenUp } from '../testing/webhook-scenarios';
import {
  issueMonitorRefreshedThenFired,
  livenessPassRecovers,
  livenessWatchRecovers,
} from '../testing/recovery-scenarios';

const HISTORIES_DIR = join(__dirname, '..', 'test', 'histories');

type Stack = { env: Record<string, string>; stories: (h: Harness) => Promise<Record<string, string>> };

const STACKS: Record<string, Stack> = {
  // a grace long enough that the watchdog scenario waits one out on the workflow's own timer
  main: { env: { TREEWARDEN_FIRST_RUN_GRACE_MS: '5000' }, stories: mainStories },
  // a cap of one running run per company would hold up the main stories
  capped: {
    env: { TREEWARDEN_COMPANY_MAX_RUNNING_RUNS: '1' },
    stories: async (h) => {
      const waited = await runWaitsForCompanyCap(h, await seedCompany(h, 'History recorder, capped'));
      return { 'agent-run.waited-for-company-cap': waited.runWorkflowId };
    },
  },
  // a stall threshold of seconds: the watch's timer falls due while the recorder waits
  'liveness-watch': {
    env: { TREEWARDEN_LIVENESS_STALL_MS: '3000' },
    stories: async (h) => {
      const watch = await livenessWatchRecovers(h, await seedCompany(h, 'History recorder, liveness'));
      return { 'liveness-watch.recovers-then-stands-down': `${watch.workflowId}@${watch.executions[0].runId}` };
    },
  },
};

async function record(only: string[]) {
  const unknown = only.filter((name) => !(name in STACKS));
  if (unknown.length > 0) throw new Error(`no such stack: ${unknown.join(', ')} (${Object.keys(STACKS).join(', ')})`);
  for (const [name, stack] of Object.entries(STACKS)) {
    if (only.length > 0 && !only.includes(name)) continue;
    const h = await startHarness(stack.env);
    try {
      await save(h, await stack.stories(h));
    } finally {
      await h.close();
    }
  }
}

async function mainStories(h: Harness): Promise<Record<string, string>> {
  const c = await seedCompany(h, 'History recorder');
  const watchdog = await watchdogWakes(h, c, { remove: true });
  const rechecked = await watchdogRechecks(h, c);
  const hold = await holdInterruptsRun(h, c, { release: true });
  const retriedHold = await holdInterruptsRun(h, c, { release: true, failFirstResumeWake: true });
  const failed = await runFails(h, c);
  const monitored = await monitorStopsWithOwner(h, c);
  const reconciled = await blockerResolved(h, c);
  const inspected = await inspectionProbesHost(h, c);
  const delivered = await webhookDelivered(h, c);
  const givenUp = await webhookGivenUp(h, c);
  const retention = await retentionPasses(h);
  const monitor = await issueMonitorRefreshedThenFired(h, c);
  const liveness = await livenessPassRecovers(h, c);
  const executions: Record<string, string> = {
    'task-watchdog.wake-then-removed': watchdog.watchdogWorkflowId,
    'task-watchdog.recheck-then-removed': rechecked.watchdogWorkflowId,
    'agent-run.noop-succeeded': watchdog.reviewRunWorkflowId,
    'tree-hold.pause-then-release': hold.holdWorkflowId,
    'tree-hold.resume-wake-retried': retriedHold.holdWorkflowId,
    'agent-run.stopped-by-hold': hold.stoppedRunWorkflowId,
    'agent-run.process-resumed': hold.resumedRunWorkflowId!,
    'agent-run.process-failed': failed.runWorkflowId,
    'agent-run.stopped-by-operator': monitored.runWorkflowId,
    'background-job.monitor-stopped-with-owner': monitored.jobWorkflowId,
    'blocker-resolution.resolved-then-resumed': reconciled.resolutionWorkflowId,
    'host-probe.live-run-inspected': inspected.probeWorkflowId,
    'webhook-delivery.delivered': delivered,
    'webhook-delivery.dead': givenUp,
    'retention.pass': retention.workflowId,
    'issue-monitor.refreshed-then-fired': monitor.monitorWorkflowId,
    'liveness-recovery.pass-recovers': liveness.workflowId,
  };
  return executions;
}

async function save(h: Harness, executions: Record<string, string>) {
  mkdirSync(HISTORIES_DIR, { recursive: true });
  for (const [name, execution] of Object.entries(executions)) {
    // `<workflow id>@<run id>` names one execution of an id that has several
    const [id, runId] = execution.split('@');
    const history = await h.services.client.workflow.getHandle(id, runId).fetchHistory();
    // re-indented so a re-recording shows up as a readable diff
    writeFileSync(
      join(HISTORIES_DIR, `${name}.json`),
      `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`,
    );
    process.stdout.write(`recorded ${name} (${history.events?.length ?? 0} events)\n`);
  }
}

async function main() {
  await globalSetup();
  try {
    await record(process.argv.slice(2));
  } finally {
    await globalTeardown();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `recording histories failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
