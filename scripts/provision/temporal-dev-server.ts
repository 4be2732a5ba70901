/** `temporal server start-dev` as a child process, bound to 127.0.0.1, healthy before it is handed out. */
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import type { SearchAttributeTypeName } from '../../temporal/search-attributes';
import { killOnExit, lineReader, spawnOrphanWatchdog } from './child-processes';
import { freePort } from '../../runtime/ports';
import { TREEWARDEN_DYNAMIC_CONFIG } from './temporal-dynamic-config';
import { defaultLog, ensureTemporalCli, type Log } from './temporal-cli';

export interface StartDevServerOptions {
  /** Frontend gRPC port; a free one when omitted. */
  port?: number;
  /** Web UI port; a free one when omitted, `null` = headless. */
  uiPort?: number | null;
  /** SQLite file for persistence; in-memory when omitted. */
  dbFile?: string;
  /** Namespace to create besides `default`. */
  namespace?: string;
  searchAttributes: Record<string, SearchAttributeTypeName>;
  /** `--dynamic-config-value key=<JSON value>` entries, besides (or overriding) {@link TREEWARDEN_DYNAMIC_CONFIG}. */
  dynamicConfig?: Record<string, string | number | boolean>;
  log?: Log;
  /** Use this binary instead of {@link ensureTemporalCli}. */
  executable?: string;
  /** Health deadline; default 60 s. */
  startTimeoutMs?: number;
}

export interface DevServer {
  /** `127.0.0.1:<port>` */
  address: string;
  namespace: string;
  uiUrl?: string;
  pid: number;
  /** SIGTERM, then SIGKILL after 10 s; resolves once the process has exited. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Spawns `temporal server start-dev` bound to 127.0.0.1 and resolves once it answers gRPC and knows the namespace.
 * The server is killed on stop(), on this process's 'exit', and (POSIX) by a watchdog if this process dies hard.
 */
export async function startDevServer(opts: StartDevServerOptions): Promise<DevServer> {
  const log = opts.log ?? defaultLog;
  const bin = opts.executable ?? (await ensureTemporalCli(log));
  // Ports we picked ourselves can be lost to another process between freePort() and the server's bind: retry those.
  const ownPorts = opts.port === undefined || opts.uiPort === undefined;
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await freePort());
    const uiPort = opts.uiPort === null ? null : (opts.uiPort ?? (await freePort()));
    try {
      return await startDevServerOnce(bin, port, uiPort, opts, log);
    } catch (err) {
      if (!(err instanceof PortInUseError) || !ownPorts || attempt >= 3) throw err;
      log(`port collision starting the dev server (attempt ${attempt}); retrying with other ports`);
    }
  }
}

class PortInUseError extends Error {}

async function startDevServerOnce(
  bin: string,
  port: number,
  uiPort: number | null,
  opts: StartDevServerOptions,
  log: Log,
): Promise<DevServer> {
  const namespace = opts.namespace ?? 'default';
  const address = `127.0.0.1:${port}`;

  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port)];
  if (uiPort === null) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (opts.dbFile) args.push('--db-filename', opts.dbFile);
  if (namespace !== 'default') args.push('--namespace', namespace);
  for (const [key, type] of Object.entries(opts.searchAttributes)) args.push('--search-attribute', `${key}=${type}`);
  for (const [key, value] of Object.entries({ ...TREEWARDEN_DYNAMIC_CONFIG, ...opts.dynamicConfig })) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  args.push('--log-level', 'warn');

  const tail: string[] = [];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
  const pid = child.pid;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (err) => {
      tail.push(`spawn error: ${err.message}`);
      resolve({ code: null, signal: null });
    });
  });
  const onLine = (line: string) => {
    tail.push(line);
    if (tail.length > 60) tail.shift();
  };
  lineReader(child.stdout, onLine);
  lineReader(child.stderr, onLine);
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });
  const unregister = killOnExit(child);
  const watchdog = pid === undefined ? undefined : spawnOrphanWatchdog(pid);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      child.ref();
      if (!hasExited) {
        child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const killed = await Promise.race([
          exited.then(() => false),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(true), 10_000);
          }),
        ]);
        clearTimeout(timer);
        if (killed) {
          log(`temporal dev server (pid ${pid}) ignored SIGTERM for 10 s; sending SIGKILL`);
          child.kill('SIGKILL');
        }
        await exited;
      }
      unregister();
      if (watchdog?.pid !== undefined && watchdog.exitCode === null && watchdog.signalCode === null) {
        try {
          process.kill(watchdog.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    })());

  const deadline = Date.now() + (opts.startTimeoutMs ?? 60_000);
  let lastError: unknown;
  for (;;) {
    if (hasExited || pid === undefined) {
      const { code, signal } = await exited;
      await stop();
      const output = tail.join('\n');
      const message =
        `temporal dev server exited before becoming healthy (code ${code}, signal ${signal}); ` +
        `${bin} ${args.join(' ')}\n` +
        `--- server output (tail) ---\n${output}`;
      throw /address already in use/i.test(output) ? new PortInUseError(message) : new Error(message);
    }
    try {
      await checkHealth(address, namespace);
      break;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `temporal dev server at ${address} not healthy after ${Math.round((opts.startTimeoutMs ?? 60_000) / 1000)} s ` +
          `(last error: ${lastError instanceof Error ? lastError.message : String(lastError)}); ` +
          `${bin} ${args.join(' ')}\n` +
          `--- server output (tail) ---\n${tail.join('\n')}`,
      );
    }
    await sleep(250);
  }

  // Don't let the server (or its output pipes) keep this process alive; the exit hook / watchdog clean it up.
  child.unref();
  for (const s of [child.stdout, child.stderr]) (s as unknown as { unref?: () => void } | null)?.unref?.();

  return {
    address,
    namespace,
    uiUrl: uiPort === null ? undefined : `http://127.0.0.1:${uiPort}`,
    pid,
    stop,
  };
}

/** One health probe with a fresh channel (grpc-js reconnect backoff would otherwise grow to minutes). */
async function checkHealth(address: string, namespace: string): Promise<void> {
  const connection = Connection.lazy({ address, connectTimeout: '2s' });
  try {
    await connection.ensureConnected(); // waitForReady + getSystemInfo
    await connection.withDeadline(Date.now() + 5_000, () =>
      connection.workflowService.describeNamespace({ namespace }),
    );
  } finally {
    await connection.close();
  }
}
