import { proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RetentionCounts } from '../domain/retention';

/**
 * Started by the `treewarden-retention` schedule (retention/schedule.ts): one retention pass, which deletes in small
 * batches what finished more than TREEWARDEN_RETENTION_DAYS ago and returns how much of each kind it removed.
 */
export async function retentionWorkflow(): Promise<RetentionCounts> {
  // A pass is many short statements and heartbeats throughout: a worker that dies mid-pass is noticed within a
  // minute and the pass starts over elsewhere (every batch is idempotent). The retries are bounded: a pass that
  // keeps failing gives way to the next scheduled one instead of running alongside it.
  const { runRetentionPass } = proxyActivities<Activities>({
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '10 seconds', maximumInterval: '5 minutes', maximumAttempts: 5 },
  });
  setCurrentDetails('deleting what finished before the retention cutoff, in batches');
  const removed = await runRetentionPass.executeWithOptions({ summary: 'Delete expired rows and run folders' }, []);
  const total = Object.values(removed).reduce((sum, count) => sum + count, 0);
  setCurrentDetails(`removed ${total}: ${JSON.stringify(removed)}`);
  return removed;
}
