import { isCancellation, patched, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS, failureMessage } from './definitions';
import { onHost } from './host-affine';
import { adoptUntilExit, mayStillRun } from './run-adoption';
import { settle, stopAndSettle } from './stop-and-settle';

export interface BackgroundJobInput {
  jobId: string;
  heartbeatTimeoutMs?: number;
  /** the owner run's host: the job runs there, beside the run's processes and workspace */
  hostId?: string | null;
  /** how long a job whose worker let go of it (or died) waits for a worker of its host to adopt it */
  adoptionWindowMs?: number;
}

/** A job whose worker let go of it or died is adopted by its host's next worker, as its run's agent is (issue 44). */
export const JOB_ADOPTION_PATCH = 'adopt-jobs-their-worker-let-go';

/** A job's workflow ends with the job's settled status. */
export type BackgroundJobResult = Awaited<ReturnType<Activities['finishJob']>>['status'];

/**
 * `background-job:<jobId>`: a shell job or monitor a run started. It lives until its command
 * exits or it is stopped (by an operator, or because its owner run ended); a stop is verified.
 */
export async function backgroundJobWorkflow(input: BackgroundJobInput): Promise<BackgroundJobResult> {
  const { jobId, heartbeatTimeoutMs, hostId } = input;
  const heartbeatMs = heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS;
  const waitForHostMs = 2 * heartbeatMs;
  // never retried: a monitor's command is not idempotent; a dead worker is noticed by heartbeat.
  const job = { startToCloseTimeout: '7 days', heartbeatTimeout: heartbeatMs } as const;
  const { executeJob } = hostId
    ? onHost(hostId, { ...job, waitForHostMs, maximumAttempts: 1 })
    : proxyActivities<Activities>({ ...job, retry: { maximumAttempts: 1 } });
  try {
    setCurrentDetails('running');
    const exitCode = await executeJob
      .executeWithOptions({ summary: 'Run the command in its own process group' }, [jobId])
      .catch((error: unknown) => {
        // executions started before jobs could be adopted, or without a window, stop the job as before
        if (!input.adoptionWindowMs || !mayStillRun(error) || !patched(JOB_ADOPTION_PATCH)) throw error;
        return adoptUntilExit('job', jobId, heartbeatMs, input.adoptionWindowMs);
      });
    return await settle({ target: 'job', id: jobId, outcome: { kind: 'exited', exitCode } });
  } catch (error) {
    const outcome = isCancellation(error)
      ? { kind: 'stopped' as const }
      : { kind: 'error' as const, error: failureMessage(error) };
    const stopping = 'stopping: verifying that no process of the job survives';
    return stopAndSettle({ target: 'job', id: jobId, outcome }, stopping, waitForHostMs);
  }
}
