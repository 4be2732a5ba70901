import { proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { LivenessPass } from '../domain/liveness';

/**
 * Started by the `treewarden-liveness` schedule (liveness/schedule.ts): one scan for stalled agent-owned work, which
 * wakes each stalled issue's assignee once per stall (liveness/recovery.ts) and returns what it found.
 */
export async function livenessRecoveryWorkflow(): Promise<LivenessPass> {
  // A pass is one read and a few short transactions per recovery; a minute is ample, and a dead worker's pass is
  // noticed within one heartbeat timeout. Bounded retries: a pass that keeps failing gives way to the next scheduled
  // one (each recovery is exactly once by its row, so a pass that ran partly repeats nothing).
  const { recoverStalledIssues } = proxyActivities<Activities>({
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 3 },
  });
  setCurrentDetails('looking for agent-owned work in progress with no live path');
  const pass = await recoverStalledIssues.executeWithOptions({ summary: 'Recover stalled issues' }, []);
  setCurrentDetails(`recovered ${pass.recovered} of ${pass.idle} idle issues (${pass.paced} paced to the next pass)`);
  return pass;
}
