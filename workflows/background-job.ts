import { CancellationScope, isCancellation, patched, proxyActivities, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { StateKey } from '../domain/search-attributes';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS, failureMessage } from './definitions';
import { onHost, stopOnOwningHost } from './host-affine';

// DB bookkeeping: a short idempotent CAS; retried through database blips.
const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
});

// Verifying a stop: bounded by the grace period plus the SIGKILL settle; heartbeats while it waits.
const stopper = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

export interface BackgroundJobInput {
  jobId: string;
  heartbeatTimeoutMs?: number;
  /** the owner run's host: the job runs there, beside the run's processes and workspace */
  hostId?: string | null;
}

/** A job's workflow ends with the job's settled status. */
export type BackgroundJobResult = Awaited<ReturnType<Activities['finishJob']>>['status'];

/**
 * `background-job:<jobId>`: a shell job or monitor a run started. It lives until its command
 * exits or it is stopped (by an operator, or because its owner run ended); a stop is verified.
 */
export async function backgroundJobWorkflow(input: BackgroundJobInput): Promise<BackgroundJobResult> {
  const { jobId, heartbeatTimeoutMs, hostId } = input;
  const heartbeatMs = heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS;
  // never retried: a monitor's command is not idempotent; a dead worker is noticed by heartbeat.
  // Executions started before 'host-affine-stop' run the job on any worker and stop it there.
  const hostAffine = patched('host-affine-stop');
  const { executeJob } =
    hostAffine && hostId
      ? onHost(hostId, { waitForHostMs: 2 * heartbeatMs, startToCloseTimeout: '7 days', heartbeatTimeout: heartbeatMs, maximumAttempts: 1 })
      : proxyActivities<Activities>({ startToCloseTimeout: '7 days', heartbeatTimeout: heartbeatMs, retry: { maximumAttempts: 1 } });
  try {
    setCurrentDetails('running');
    const exitCode = await executeJob.executeWithOptions({ summary: 'Run the command in its own process group' }, [jobId]);
    return await settle(jobId, { kind: 'exited', exitCode });
  } catch (error) {
    return CancellationScope.nonCancellable(async () => {
      setCurrentDetails('stopping: verifying that no process of the job survives');
      if (hostAffine) await stopOnOwningHost('job', jobId, 2 * heartbeatMs);
      else await stopper.stopJobProcesses.executeWithOptions({ summary: 'Stop the job and verify nothing survived' }, [jobId]);
      return settle(jobId, isCancellation(error) ? { kind: 'stopped' } : { kind: 'error', error: failureMessage(error) });
    });
  }
}

async function settle(jobId: string, outcome: Parameters<Activities['finishJob']>[1]): Promise<BackgroundJobResult> {
  const job = await bookkeeping.finishJob.executeWithOptions({ summary: `Settle the job (${outcome.kind})` }, [jobId, outcome]);
  upsertSearchAttributes([{ key: StateKey, value: job.status }]);
  setCurrentDetails(`settled: ${job.status}`);
  return job.status;
}
