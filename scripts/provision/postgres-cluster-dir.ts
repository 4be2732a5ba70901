/**
 * The folder of a cluster: created (initdb) on first use with a generated superuser password, reachable by the
 * postgres OS user when we are root, and cleared of a `postmaster.pid` left by a crash.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { isAlive } from '../../processes/process-table';
import {
  EmbeddedPostgresError,
  ensurePostgresOsUser,
  execFileAsync,
  isRoot,
  POSTGRES_OS_USER,
  runPg,
  type Log,
} from './postgres-binaries';

export async function assertWritable(dir: string): Promise<void> {
  const parent = path.dirname(dir);
  try {
    await fs.mkdir(parent, { recursive: true });
    await fs.access(parent, fs.constants.W_OK);
  } catch (error) {
    throw new EmbeddedPostgresError(
      `the data folder ${parent} is not writable (${(error as Error).message}); ` +
        'set TREEWARDEN_DATA_DIR to a writable folder, or DATABASE_URL to a PostgreSQL server',
    );
  }
}

/**
 * The superuser password, generated once per cluster. A cluster listens on loopback only, but agents run on this
 * machine too, so it never uses trust authentication.
 */
export async function clusterPassword(passwordFile: string): Promise<string> {
  const existing = await fs.readFile(passwordFile, 'utf8').catch(() => undefined);
  if (existing?.trim()) return existing.trim();
  const password = randomBytes(18).toString('base64url');
  await fs.writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  return password;
}

/**
 * As root, the cluster runs as the postgres OS user, which must reach the data folder: let it traverse ours (o+x,
 * no listing; the files inside keep their own modes), and fail naming the folder when an ancestor stops it.
 */
async function letPostgresUserReach(clusterDir: string): Promise<void> {
  const parent = path.dirname(clusterDir);
  const { mode } = await fs.stat(parent);
  if (!(mode & 0o001)) await fs.chmod(parent, mode | 0o001);
  const reachable = await execFileAsync('runuser', ['-u', POSTGRES_OS_USER, '--', 'test', '-x', parent]).then(
    () => true,
    () => false,
  );
  if (!reachable) {
    throw new EmbeddedPostgresError(
      `the OS user ${POSTGRES_OS_USER} (PostgreSQL does not run as root) cannot reach ${parent}: ` +
        'a parent folder is closed to other users; ' +
        'set TREEWARDEN_DATA_DIR to a folder it can reach, or DATABASE_URL to a PostgreSQL server',
    );
  }
}

export async function initialise(clusterDir: string, password: string, log: Log): Promise<void> {
  const t0 = Date.now();
  await fs.mkdir(clusterDir, { recursive: true, mode: 0o700 });
  const pwFile = path.join(path.dirname(clusterDir), `.pg-initdb-${process.pid}`);
  await fs.writeFile(pwFile, `${password}\n`, { mode: 0o600 });
  try {
    if (isRoot()) {
      await ensurePostgresOsUser(log);
      await letPostgresUserReach(clusterDir);
      await execFileAsync('chown', [POSTGRES_OS_USER, clusterDir, pwFile]);
    }
    await runPg('initdb', [
      '-D',
      clusterDir,
      '-U',
      'postgres',
      '--auth=scram-sha-256',
      `--pwfile=${pwFile}`,
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
  } catch (error) {
    // a half-initialised cluster would fail every later start
    await fs.rm(clusterDir, { recursive: true, force: true });
    throw new EmbeddedPostgresError(
      `initdb in ${clusterDir} failed: ${(error as { stderr?: string }).stderr || (error as Error).message}`,
    );
  } finally {
    await fs.rm(pwFile, { force: true });
  }
  log(`initialised a PostgreSQL cluster in ${clusterDir} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

/** The pid on the first line of the cluster's `postmaster.pid`; undefined when there is no such file. */
export async function postmasterPid(clusterDir: string): Promise<number | undefined> {
  const content = await fs.readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => undefined);
  return content === undefined ? undefined : Number(content.split('\n')[0]);
}

/**
 * A `postmaster.pid` left by a crash: a postmaster of ours still running (npm start was SIGKILLed) is stopped, a
 * dead one's file is removed. PostgreSQL removes a stale file itself only while its pid is unused; after a reboot
 * the pid may belong to anything, and the start would fail.
 */
export async function recoverStalePidFile(clusterDir: string, log: Log): Promise<void> {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  const pid = await postmasterPid(clusterDir);
  if (pid === undefined) return;
  const cmdline =
    Number.isInteger(pid) && pid > 0 && isAlive(pid)
      ? await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')
      : '';
  if (cmdline.includes('postgres') && cmdline.includes(clusterDir)) {
    log(`a PostgreSQL from an earlier start (pid ${pid}) still runs on ${clusterDir}: stopping it`);
    await runPg('pg_ctl', ['-D', clusterDir, '-m', 'fast', '-w', 'stop']).catch(() => undefined);
  }
  if (
    await fs.stat(pidFile).then(
      () => true,
      () => false,
    )
  ) {
    log(`removing the stale ${pidFile} left by a crash (pid ${pid} is not a PostgreSQL of this cluster)`);
    await fs.rm(pidFile, { force: true });
  }
}
