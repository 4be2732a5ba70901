/**
 * A worker's sweep of its own host, at start and every TREEWARDEN_ORPHAN_SWEEP_MS: orphaned processes get their
 * verified stop (processes/orphans.ts), and the run folders that retention passes on other hosts left to this one go
 * (retention/run-folders.ts).
 */
import type { Deps } from '../runtime/deps';
import { reapOrphans } from '../processes/orphans';
import { removeFoldersLeftToThisHost } from '../retention/run-folders';

export interface HostSweepReport {
  orphansReaped: number;
  pendingStopsVerified: number;
  expiredRunFoldersRemoved: number;
}

/** Never crashes the worker: a failed half is logged, and the next sweep tries again. */
export async function sweepHost(deps: Deps): Promise<HostSweepReport> {
  const report: HostSweepReport = { orphansReaped: 0, pendingStopsVerified: 0, expiredRunFoldersRemoved: 0 };
  try {
    const reaped = await reapOrphans(deps);
    Object.assign(report, { orphansReaped: reaped.reaped.length, pendingStopsVerified: reaped.verified.length });
  } catch (error) {
    deps.log.error({ err: error }, 'orphan sweep failed; the next sweep tries again');
  }
  try {
    report.expiredRunFoldersRemoved = await removeFoldersLeftToThisHost(deps);
    if (report.expiredRunFoldersRemoved > 0)
      deps.log.info({ removed: report.expiredRunFoldersRemoved }, 'removed the folders of runs retention deleted');
  } catch (error) {
    deps.log.error({ err: error }, 'removing the folders of deleted runs failed; the next sweep tries again');
  }
  return report;
}
