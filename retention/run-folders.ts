/**
 * The file side of a retention pass: the run folders (runs/run-files.ts) of the runs the pass deleted. Only those: the
 * run-files root is shared by every deployment and test stack on the host, so a folder without a row of this
 * database may well be another's live run.
 */
import { rm, stat } from 'node:fs/promises';
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
