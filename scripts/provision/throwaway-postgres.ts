/**
 * Throwaway clusters in new temporary folders (tests, benchmarks, the cluster check), and the removal of those
 * whose process died without stopping them.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isAlive } from '../../processes/process-table';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres';
import type { Log } from './postgres-binaries';
import { recoverStalePidFile } from './postgres-cluster-dir';

const THROWAWAY_PREFIX = 'treewarden-pg-';
const OWNER_FILE = 'owner-pid';

/** Throwaway clusters of processes that died without stopping them (their postmaster was stopped by the guard). */
async function removeAbandonedThrowaways(log: Log): Promise<void> {
  const entries = await fs.readdir(os.tmpdir()).catch(() => [] as string[]);
  for (const entry of entries.filter((e) => e.startsWith(THROWAWAY_PREFIX))) {
    const dir = path.join(os.tmpdir(), entry);
    const owner = Number(await fs.readFile(path.join(dir, OWNER_FILE), 'utf8').catch(() => 'NaN'));
    if (Number.isInteger(owner) && isAlive(owner)) continue; // a concurrent run's cluster
    // no owner file yet: being created right now
    if (Number.isNaN(owner) && Date.now() - (await fs.stat(dir)).mtimeMs < 60_000) continue;
    await recoverStalePidFile(path.join(dir, 'postgres'), log);
    await fs.rm(dir, { recursive: true, force: true });
    log(`removed abandoned throwaway cluster ${dir}`);
  }
}

/**
 * A throwaway cluster in a new temporary folder (tests, benchmarks, the cluster check), removed by stop(). If this
 * process dies without stopping it, the guard stops the postmaster, and the next throwaway start removes the folder.
 */
export async function startThrowawayPostgres(log: Log): Promise<EmbeddedPostgres> {
  await removeAbandonedThrowaways(log);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), THROWAWAY_PREFIX));
  await fs.writeFile(path.join(dir, OWNER_FILE), String(process.pid));
  const clusterDir = path.join(dir, 'postgres');
  const cluster = await startEmbeddedPostgres({ clusterDir, durable: false, log }).catch(async (error: unknown) => {
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  });
  return {
    ...cluster,
    stop: async () => {
      await cluster.stop();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
