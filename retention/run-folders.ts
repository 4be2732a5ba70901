/**
 * The file side of retention: the run folders (runs/run-files.ts) of the runs a pass deleted. Only those: the run-files
 * root is shared by every deployment and test stack on the host, so a folder without a row of this database may well
 * be another's live run. A pass removes the folders on its own host at once; for a run that ran on another host it
 * leaves an `ExpiredRunFolder` row, and that host's worker removes the folder at its next orphan sweep.
 */
import { rm, stat } from 'node:fs/promises';
import { RETENTION_BATCH_SIZE } from '../domain/retention';
import type { Deps } from '../runtime/deps';
import { runFiles } from '../runs/run-files';

/** How many of the runs' folders were on this host and are gone now. */
export async function removeRunFolders(runIds: readonly string[]): Promise<number> {
  let removed = 0;
  for (const runId of runIds) {
    const { runDir } = runFiles(runId, null);
    const there = await stat(runDir).then(
      () => true,
      () => false,
    );
    if (!there) continue;
    await rm(runDir, { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/** The folders passes on other hosts left to this one: removed, then their rows; how many folders were here. */
export async function removeFoldersLeftToThisHost(deps: Pick<Deps, 'db' | 'hostId'>): Promise<number> {
  let removed = 0;
  for (;;) {
    const left = await deps.db.expiredRunFolder.findMany({
      where: { hostId: deps.hostId },
      select: { runId: true },
      take: RETENTION_BATCH_SIZE,
    });
    const runIds = left.map((folder) => folder.runId);
    removed += await removeRunFolders(runIds);
    await deps.db.expiredRunFolder.deleteMany({ where: { runId: { in: runIds } } });
    if (runIds.length < RETENTION_BATCH_SIZE) return removed;
  }
}
