/**
 * The workflow side of adoption (issue 25): an agent whose worker let go of it (or died: its heartbeat stopped) is
 * adopted by a worker of its own host, for as long as it takes one to come back within the adoption window. Each
 * adoption that is itself let go of (a second deploy) is followed by the next, until the agent exits.
 */
import { ActivityFailure, ApplicationFailure, setCurrentDetails, TimeoutFailure } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { AGENT_LET_GO } from '../domain/adoption';
import { onHost } from './host-affine';
import { bookkeeping } from './stop-and-settle';

export const ADOPTION_PATCH = 'adopt-agents-their-worker-let-go';

/** The executeRun or adoptRun attempt ended while its agent may still run: a let-go, or a dead worker's silence. */
export function mayStillRun(error: unknown): boolean {
  if (!(error instanceof ActivityFailure)) return false;
  const cause = error.cause;
  return (
    (cause instanceof ApplicationFailure && cause.type === AGENT_LET_GO) ||
    (cause instanceof TimeoutFailure && cause.timeoutType === 'HEARTBEAT')
  );
}

type Outcome = Awaited<ReturnType<Activities['adoptRun']>>;

/**
 * Adopts the run (or a run's job) on its host until its command exits; throws when no worker of the host came within
 * the window. A run resolves with its outcome, a job with its exit code.
 */
export function adoptUntilExit(target: 'run', id: string, heartbeatMs: number, windowMs: number): Promise<Outcome>;
export function adoptUntilExit(target: 'job', id: string, heartbeatMs: number, windowMs: number): Promise<number>;
export async function adoptUntilExit(
  target: 'run' | 'job',
  id: string,
  heartbeatMs: number,
  windowMs: number,
): Promise<Outcome | number> {
  const noun = target === 'run' ? 'agent' : 'job';
  const what = `the ${noun}`;
  const hostId = await bookkeeping.hostOf.executeWithOptions({ summary: `Find the host that runs ${what}` }, [
    target,
    id,
  ]);
  if (hostId === null)
    throw ApplicationFailure.nonRetryable(`${target} ${id} never started on a host`, 'NothingToAdopt');
  // one attempt each: an adoption that ends early (a let-go) is answered by the next adoption, not a retry
  const adopter = onHost(hostId, {
    waitForHostMs: windowMs,
    startToCloseTimeout: '3650 days',
    heartbeatTimeout: heartbeatMs,
    maximumAttempts: 1,
  });
  for (let adoption = 1; ; adoption++) {
    setCurrentDetails(`running: waiting for a worker of host ${hostId} to adopt ${what} (adoption ${adoption})`);
    const options = { summary: `Adopt the running ${noun} on host ${hostId} (adoption ${adoption})` };
    try {
      return target === 'run'
        ? await adopter.adoptRun.executeWithOptions(options, [id])
        : await adopter.adoptJob.executeWithOptions(options, [id]);
    } catch (error) {
      if (error instanceof ActivityFailure && error.cause instanceof TimeoutFailure) {
        if (error.cause.timeoutType === 'SCHEDULE_TO_START')
          throw ApplicationFailure.nonRetryable(
            `no worker of host ${hostId} came back to adopt ${what} within the adoption window (${windowMs} ms)`,
            'AdoptionWindowPassed',
          );
      }
      if (!mayStillRun(error)) throw error;
    }
  }
}
