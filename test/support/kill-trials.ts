/**
 * Worker processes killed with SIGKILL in the middle of their work, for the files that prove nothing is lost
 * (test/worker-kills.test.ts, test/release-kills.test.ts): a harness whose workers are processes (two, each death
 * replaced at once), and the ways to kill one at the right moment.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { temporal } from '@temporalio/proto';
import { startHarness, type Harness } from '../../testing/harness';
import { workerFleet, workerRunning, type WorkerFleet } from '../../testing/worker-fleet';

export interface KillFleet {
  h: Harness;
  fleet: WorkerFleet;
  /** a replacement for a killed worker, started at once (awaited when the fleet is empty, and at close) */
  replace(): void;
  /**
   * Waits until `activityType` is running for the workflow, waits `delayMs` more, and kills the worker process
   * running it; a replacement starts at once. True when the kill landed while the activity was still in flight.
   */
  killMidActivity(id: string, activityType: string, delayMs: number, until: () => boolean): Promise<boolean>;
  /**
   * Waits until a workflow task of `id` has started, waits `delayMs` more and kills every worker (the one running
   * the task among them); two replacements start. The kill landed mid-task when the server then timed that task out
   * (`timedOutTasks`).
   */
  killDuringWorkflowTask(id: string, delayMs: number, until: () => boolean): Promise<void>;
  timedOutTasks(id: string): Promise<number>;
  /** Trials go on while a replacement starts, unless no worker is left to kill. */
  fleetRestored(): Promise<void>;
  close(): Promise<void>;
}

export async function startKillFleet(): Promise<KillFleet> {
  // a dead worker's activity moves to a live one after 4 s instead of the production 10 s (shorter risks timing out
  // live activities on a loaded 2-core machine); every worker start recovers (no fleet-wide lease)
  const h = await startHarness(
    {
      TREEWARDEN_HEARTBEAT_TIMEOUT_MS: '4000',
      TREEWARDEN_FIRST_RUN_GRACE_MS: '1',
      TREEWARDEN_FLEET_RECOVERY_EVERY_MS: '1',
    },
    { inProcessWorker: false },
  );
  const fleet = workerFleet(h);
  await Promise.all([fleet.start(), fleet.start()]);
  const replacements: Promise<unknown>[] = [];
  const replace = () => void replacements.push(fleet.start());
  return {
    h,
    fleet,
    replace,
    async killMidActivity(id, activityType, delayMs, until) {
      let identity: string | null = null;
      while (!identity && !until()) {
        identity = await workerRunning(h.services.client, id, activityType).catch(() => null);
        if (!identity) await sleep(10);
      }
      if (!identity) return false;
      await sleep(delayMs);
      const victim = fleet.workers.find((w) => w.identity === identity);
      if (!victim) return false;
      const inFlight = (await workerRunning(h.services.client, id, activityType).catch(() => null)) === identity;
      await fleet.kill(victim);
      // the surviving worker takes the retried activity; the replacement joins when it is ready
      replace();
      return inFlight;
    },
    async killDuringWorkflowTask(id, delayMs, until) {
      const started = temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED;
      for (;;) {
        if (until()) return;
        const description = await h.services.client.workflow
          .getHandle(id)
          .describe()
          .catch(() => null);
        if (description?.raw.pendingWorkflowTask?.state === started) break;
        await sleep(5);
      }
      await sleep(delayMs);
      await Promise.all(fleet.workers.map((w) => fleet.kill(w)));
      replace();
      replace();
    },
    async timedOutTasks(id) {
      const history = await h.services.client.workflow.getHandle(id).fetchHistory();
      return (history.events ?? []).filter((e) => e.workflowTaskTimedOutEventAttributes).length;
    },
    async fleetRestored() {
      if (fleet.workers.length < 1) await Promise.all(replacements.splice(0));
    },
    async close() {
      await Promise.allSettled(replacements);
      await fleet.close();
      await h.close();
    },
  };
}

/**
 * Runs `trial` until `wanted` of its kills landed in flight (a kill that lands after the work finished proves
 * nothing), at most `max` times; returns how many landed. Sized to prove the property at each random point a kill
 * lands, not to count throughput: the many-trial versions are `npm run bench` scenarios' job.
 */
export async function trialsUntilLanded(wanted: number, max: number, trial: (n: number) => Promise<boolean>) {
  let landed = 0;
  for (let n = 0; n < max && landed < wanted; n++) if (await trial(n)) landed++;
  return landed;
}
