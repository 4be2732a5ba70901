/** One retention pass: the expired rows and the folders of the runs it deleted, logged with their counts. */
import { addRemovals, noRemovals, retentionCutoffs, type RetentionCounts } from '../domain/retention';
import type { Deps } from '../runtime/deps';
import { removeExpiredRows } from './rows';
import { removeRunFolders } from './run-folders';

export async function runRetentionPass(deps: Deps, now = new Date()): Promise<RetentionCounts> {
  const cutoffs = retentionCutoffs(
    now,
    deps.config.TREEWARDEN_RETENTION_DAYS,
    deps.config.TREEWARDEN_HOLD_RESUME_RETRIES,
  );
  const removed = noRemovals();
  const rows = await removeExpiredRows(deps.db, { cutoffs, hostId: deps.hostId }, async (runIds) => {
    removed.runFolders += await removeRunFolders(runIds);
  });
  addRemovals(removed, rows);
  deps.log.info(
    { retentionDays: deps.config.TREEWARDEN_RETENTION_DAYS, cutoff: cutoffs.finished.toISOString(), removed },
    'retention pass',
  );
  return removed;
}
