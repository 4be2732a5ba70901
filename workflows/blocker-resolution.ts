import { proxyActivities, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { StateKey } from '../domain/search-attributes';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS } from './definitions';

export interface BlockerResolutionInput {
  blockerId: string;
  heartbeatTimeoutMs?: number;
}

/**
 * `execution-blocker:<blockerId>`: a person resolved the blocker; dispatch the resume its run is
 * still owed, if any, exactly once (the claim table decides), even if the worker doing it dies.
 */
export async function blockerResolutionWorkflow({
  blockerId,
  heartbeatTimeoutMs,
}: BlockerResolutionInput): Promise<{ resumed: number }> {
  // Idempotent through the resume claim, so retried until it succeeds (a failed wake returns its
  // claim and fails the attempt); a dead worker's attempt moves elsewhere after one heartbeat timeout.
  const { resumeAfterResolution } = proxyActivities<Activities>({
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout: heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  setCurrentDetails('resolved: dispatching the resume the interrupted run is owed, if any');
  const report = await resumeAfterResolution.executeWithOptions(
    { summary: 'Dispatch the resume a resolved blocker owes' },
    [blockerId],
  );
  upsertSearchAttributes([{ key: StateKey, value: 'dispatched' }]);
  setCurrentDetails(`done: ${report.resumed.length} resumed now (a task still held resumes with its last release)`);
  return { resumed: report.resumed.length };
}
