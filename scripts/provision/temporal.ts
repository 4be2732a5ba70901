/**
 * Temporal CLI provisioning: install a pinned `temporal` binary into a user-level cache, run `temporal server
 * start-dev` as a child process, and register custom search attributes on an existing server.
 *
 * Install strategy (no manual step either way):
 *   1. `${XDG_CACHE_HOME:-$HOME/.cache}/treewarden/bin/temporal` exists and `--version` says 1.5.1 → use it.
 *   2. `go` on PATH → `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` (5–10 min cold on 2 cores).
 *      v1.5.1 is pinned on purpose: every release >= v1.6.0 has a `replace` directive in go.mod and cannot be
 *      `go install`ed (see docs/temporal-toolchain.md §2.1).
 *   3. otherwise → the SDK's own download (`TestWorkflowEnvironment.createLocal` with a `cached-download`
 *      executable pointed at the cache dir), then copy the downloaded binary to `<cache>/temporal`.
 *      Needs network access to the SDK's download host; fails with a clear error when that is unreachable.
 *
 * Concurrency: installs are serialised by `<cache>/.temporal-install.lock` (pid + host, heartbeated) so two
 * callers (two jest processes, `npm start` + `npm test`) don't build at once. The lock is an efficiency measure
 * only: the binary is built into a private staging dir and moved into place with an atomic rename, so even a broken
 * lock never exposes a half-written binary.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { freePort } from './ports';

export const TEMPORAL_CLI_VERSION = '1.5.1';
const CLI_MODULE = 'github.com/temporalio/cli';
const CLI_PACKAGE = `${CLI_MODULE}/cmd/temporal`;

export type Log = (line: string) => void;
export type SearchAttributeTypeName = 'Keyword' | 'Int' | 'Text' | 'Bool' | 'Double' | 'Datetime' | 'KeywordList';

const defaultLog: Log = (line) => {
  process.stderr.write(`[temporal] ${line}\n`);
};

/** `${XDG_CACHE_HOME:-$HOME/.cache}/treewarden/bin`: user-level, shared by every clone and CI run on the machine. */
export function temporalCacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'treewarden', 'bin');
}

/** Where {@link ensureTemporalCli} puts the binary. */
export function temporalCliPath(): string {
  return path.join(temporalCacheDir(), process.platform === 'win32' ? 'temporal.exe' : 'temporal');
}

/** Resolves to the `--version` line if `bin` is an executable temporal CLI of the pinned version, else undefined. */
export function temporalCliVersionOk(bin: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(bin, ['--version'], { timeout: 15_000, windowsHide: true }, (err, stdout) => {
      if (err) return resolve(undefined);
      const line = stdout.trim().split('\n')[0] ?? '';
      // "temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)"; a build without -ldflags says "0.0.0-DEV".
      const re = new RegExp(`^temporal version ${TEMPORAL_CLI_VERSION.replace(/\./g, '\\.')}(\\s|$)`);
      resolve(re.test(line) ? line : undefined);
    });
  });
}

/**
 * Returns the path of a `temporal` binary whose `--version` says {@link TEMPORAL_CLI_VERSION}, installing it into
 * {@link temporalCacheDir} first if needed (go install, else the SDK's download). Safe to call concurrently.
 */
export async function ensureTemporalCli(log: Log = defaultLog): Promise<string> {
  const bin = temporalCliPath();
  if (await temporalCliVersionOk(bin)) return bin;

  const dir = temporalCacheDir();
  await fs.promises.mkdir(dir, { recursive: true });
  await withInstallLock(path.join(dir, '.temporal-install.lock'), log, async () => {
    // Someone else may have finished the install while we waited for the lock.
    if (await temporalCliVersionOk(bin)) return;
    removeLeftovers(dir, log);
    const go = findOnPath('go');
    if (go) {
      await goInstall(go, dir, bin, log);
    } else {
      log(`'go' is not on PATH; falling back to the Temporal SDK's CLI download`);
      await sdkDownload(dir, bin, log);
    }
  });

  const version = await temporalCliVersionOk(bin);
  if (!version) {
    throw new Error(`temporal CLI at ${bin} does not report version ${TEMPORAL_CLI_VERSION} after install`);
  }
  log(`installed ${bin}: ${version}`);
  return bin;
}

/** Staging dirs / temp copies of installers that died hard (we hold the lock, so nobody else is using them). */
export function removeLeftovers(dir: string, log: Log): void {
  for (const entry of fs.readdirSync(dir)) {
    if (entry.startsWith('.staging-') || /^temporal(\.exe)?\.tmp-/.test(entry)) {
      log(`removing leftover ${path.join(dir, entry)} from an interrupted install`);
      fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
    }
  }
}

export function findOnPath(cmd: string): string | undefined {
  const exts = process.platform === 'win32' ? (process.env.PATHEXT ?? '.EXE').split(';') : [''];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(dir, cmd + ext);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// install lock

interface LockInfo {
  pid: number;
  host: string;
  startedAt: string;
}

const LOCK_HEARTBEAT_MS = 15_000;
/** A lock whose mtime is older than this is considered abandoned (holder heartbeats every 15 s). */
const LOCK_STALE_MS = 2 * 60_000;
const LOCK_WAIT_MAX_MS = 60 * 60_000;

/** True while `pid` exists (EPERM: it exists, owned by another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function lockIsStale(lockPath: string): { stale: boolean; holder?: LockInfo } {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(lockPath);
  } catch {
    return { stale: false }; // gone: just retry
  }
  let holder: LockInfo | undefined;
  try {
    holder = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as LockInfo;
  } catch {
    // being written right now, or garbage
  }
  const age = Date.now() - stat.mtimeMs;
  if (age > LOCK_STALE_MS) return { stale: true, holder };
  if (holder && holder.host === os.hostname() && !pidAlive(holder.pid)) return { stale: true, holder };
  if (!holder && age > 10_000) return { stale: true };
  return { stale: false, holder };
}

export async function withInstallLock<T>(lockPath: string, log: Log, fn: () => Promise<T>): Promise<T> {
  const me: LockInfo = { pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString() };
  const waitStart = Date.now();
  let lastWaitLog = 0;
  for (;;) {
    try {
      const fd = fs.openSync(lockPath, 'wx');
      fs.writeSync(fd, JSON.stringify(me));
      fs.closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const { stale, holder } = lockIsStale(lockPath);
    if (stale) {
      log(`removing stale install lock ${lockPath} (${holder ? `pid ${holder.pid} on ${holder.host}` : 'unreadable'})`);
      fs.rmSync(lockPath, { force: true });
      await sleep(Math.floor(Math.random() * 500)); // de-synchronise concurrent stale-breakers
      continue;
    }
    if (Date.now() - waitStart > LOCK_WAIT_MAX_MS) {
      throw new Error(`timed out after ${LOCK_WAIT_MAX_MS / 60_000} min waiting for install lock ${lockPath}`);
    }
    if (Date.now() - lastWaitLog > 30_000) {
      lastWaitLog = Date.now();
      log(
        `another process (${holder ? `pid ${holder.pid} on ${holder.host}` : 'unknown'}) is installing the temporal CLI; waiting (${Math.round((Date.now() - waitStart) / 1000)}s)`,
      );
    }
    await sleep(1000);
  }

  const heartbeat = setInterval(() => {
    const now = new Date();
    try {
      fs.utimesSync(lockPath, now, now);
    } catch {
      // lock was broken by someone else; the atomic rename keeps the result correct anyway
    }
  }, LOCK_HEARTBEAT_MS);
  heartbeat.unref();
  try {
    return await fn();
  } finally {
    clearInterval(heartbeat);
    try {
      const cur = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as LockInfo;
      if (cur.pid === me.pid && cur.host === me.host) fs.rmSync(lockPath, { force: true });
    } catch {
      // already gone
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// installers

/** Kill `child` if this process exits first; returns the unregister function. */
export function killOnExit(child: ChildProcess): () => void {
  const onExit = () => {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  };
  process.on('exit', onExit);
  return () => process.off('exit', onExit);
}

function formatElapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

async function goInstall(go: string, dir: string, bin: string, log: Log): Promise<void> {
  await goInstallBinaries({
    go,
    dir,
    what: `temporal CLI ${TEMPORAL_CLI_VERSION}`,
    packages: [`${CLI_PACKAGE}@v${TEMPORAL_CLI_VERSION}`],
    ldflags: `-X ${CLI_MODULE}/temporalcli.Version=${TEMPORAL_CLI_VERSION}`,
    outputs: { [path.basename(bin)]: bin },
    log,
  });
}

export interface GoInstallOptions {
  /** the `go` binary */
  go: string;
  /** the cache dir: the staging GOBIN is created inside it, so the final renames are atomic */
  dir: string;
  /** for log lines, e.g. `temporal CLI 1.5.1` */
  what: string;
  /** `import/path@vX.Y.Z` arguments of one `go install` (pinned versions only) */
  packages: string[];
  ldflags?: string;
  /** binary name as go names it (last path element) → where to move it */
  outputs: Record<string, string>;
  log: Log;
}

/**
 * `CGO_ENABLED=0 go install -v [-ldflags …] <packages>` into a private staging GOBIN, with progress lines, then
 * each built binary is moved to its target with an atomic rename. Call it under {@link withInstallLock}.
 */
export async function goInstallBinaries(opts: GoInstallOptions): Promise<void> {
  const { go, dir, what, log } = opts;
  const staging = await fs.promises.mkdtemp(path.join(dir, '.staging-'));
  try {
    const args = ['install', '-v', ...(opts.ldflags ? ['-ldflags', opts.ldflags] : []), ...opts.packages];
    log(`building ${what} with ${go} (takes 5-10 min when the Go caches are cold)`);
    log(`CGO_ENABLED=0 GOBIN=${staging} go ${args.map((a) => (a.includes(' ') ? JSON.stringify(a) : a)).join(' ')}`);
    const started = Date.now();
    const child = spawn(go, args, {
      env: { ...process.env, CGO_ENABLED: '0', GOBIN: staging },
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    const unregister = killOnExit(child);
    const tail: string[] = [];
    let packages = 0;
    const onLine = (line: string) => {
      if (!line.trim()) return;
      tail.push(line);
      if (tail.length > 40) tail.shift();
      // `-v` prints one bare import path per compiled package: count those, forward everything else.
      if (/^[\w.~-]+(\/[\w.~+-]+)*$/.test(line.trim())) packages++;
      else log(`go: ${line.replace(/^go: /, '')}`);
    };
    lineReader(child.stdout, onLine);
    lineReader(child.stderr, onLine);
    const progress = setInterval(() => {
      log(`go install still running: ${packages} packages compiled, ${formatElapsed(Date.now() - started)} elapsed`);
    }, 20_000);
    progress.unref();
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (c, signal) => resolve(signal ? null : c));
    }).finally(() => {
      clearInterval(progress);
      unregister();
    });
    if (code !== 0) {
      throw new Error(
        `go install of ${what} failed (exit ${code ?? 'signal'}) after ${formatElapsed(Date.now() - started)}:\n${tail.join('\n')}`,
      );
    }
    log(`go install finished in ${formatElapsed(Date.now() - started)} (${packages} packages compiled)`);
    for (const [built, target] of Object.entries(opts.outputs)) {
      await fs.promises.rename(path.join(staging, built), target);
    }
  } finally {
    await fs.promises.rm(staging, { recursive: true, force: true });
  }
}

async function sdkDownload(dir: string, bin: string, log: Log): Promise<void> {
  const downloadDir = path.join(dir, '.sdk-download');
  await fs.promises.mkdir(downloadDir, { recursive: true });
  const version = `v${TEMPORAL_CLI_VERSION}`;
  // sdk-core names a fixed-version download `<downloadDir>/temporal-<version>` (ephemeral_server/mod.rs).
  const downloaded = path.join(downloadDir, `temporal-${version}${process.platform === 'win32' ? '.exe' : ''}`);
  let startError: unknown;
  if (!fs.existsSync(downloaded)) {
    log(`downloading temporal CLI ${version} through @temporalio/testing into ${downloadDir}`);
    const { TestWorkflowEnvironment } = await import('@temporalio/testing');
    try {
      // Starting a throw-away dev server is the only public entry point to the SDK's downloader.
      const env = await TestWorkflowEnvironment.createLocal({
        server: {
          executable: { type: 'cached-download', downloadDir, version, ttl: '3650d' },
          ip: '127.0.0.1',
          log: { format: 'pretty', level: 'error' },
        },
      });
      await env.teardown();
    } catch (err) {
      // The download may have succeeded even if the throw-away server missed the SDK's 5 s start deadline.
      startError = err;
    }
  }
  if (!fs.existsSync(downloaded)) {
    throw new Error(
      `could not obtain temporal CLI ${version}: 'go' is not on PATH and the SDK download failed: ${String(startError)}`,
    );
  }
  const tmp = `${bin}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await fs.promises.copyFile(downloaded, tmp);
  await fs.promises.chmod(tmp, 0o755);
  await fs.promises.rename(tmp, bin);
}

export function lineReader(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  if (!stream) return;
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, i).replace(/\r$/, ''));
      buf = buf.slice(i + 1);
    }
  });
  stream.on('end', () => {
    if (buf) onLine(buf);
    buf = '';
  });
}

// ---------------------------------------------------------------------------------------------------------------
// dev server

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
  /** `--dynamic-config-value key=<JSON value>` entries. */
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

/** Shell watchdog: kills the server (TERM, then KILL after 10 s) once our process is gone, even after a SIGKILL. */
const WATCHDOG_SH = `
parent=$1; child=$2
while kill -0 "$parent" 2>/dev/null; do
  kill -0 "$child" 2>/dev/null || exit 0
  sleep 1
done
kill -TERM "$child" 2>/dev/null || exit 0
i=0
while [ $i -lt 10 ] && kill -0 "$child" 2>/dev/null; do sleep 1; i=$((i+1)); done
kill -KILL "$child" 2>/dev/null
exit 0
`;

/**
 * Starts the {@link WATCHDOG_SH} guard for `pid` (POSIX only): it kills `pid` if this process dies without stopping
 * it. SIGKILL the returned process once `pid` has been stopped normally.
 */
export function spawnOrphanWatchdog(pid: number): ChildProcess | undefined {
  if (process.platform === 'win32') return undefined;
  const watchdog = spawn('sh', ['-c', WATCHDOG_SH, 'treewarden-temporal-watchdog', String(process.pid), String(pid)], {
    detached: true,
    stdio: 'ignore',
  });
  watchdog.on('error', () => undefined); // no sh: the 'exit' hook still applies
  watchdog.unref();
  return watchdog;
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
  for (const [key, value] of Object.entries(opts.dynamicConfig ?? {})) {
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
        `temporal dev server exited before becoming healthy (code ${code}, signal ${signal}); ${bin} ${args.join(' ')}\n` +
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
          `(last error: ${lastError instanceof Error ? lastError.message : String(lastError)}); ${bin} ${args.join(' ')}\n` +
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

// ---------------------------------------------------------------------------------------------------------------
// search attributes on an existing server

type IndexedValueType = NonNullable<
  Parameters<Connection['operatorService']['addSearchAttributes']>[0]['searchAttributes']
>[string];

/** temporal.api.enums.v1.IndexedValueType */
const INDEXED_VALUE_TYPES: Record<SearchAttributeTypeName, IndexedValueType> = {
  Text: 1,
  Keyword: 2,
  Int: 3,
  Double: 4,
  Bool: 5,
  Datetime: 6,
  KeywordList: 7,
};

const GRPC_ALREADY_EXISTS = 6;

/**
 * Adds the custom search attributes from `attrs` that `namespace` does not have yet (operator service). Idempotent;
 * throws if an attribute exists with a different type. Use when pointed at an existing server (TEMPORAL_ADDRESS);
 * the dev server gets them via `--search-attribute` at start.
 */
export async function registerSearchAttributes(
  connection: Pick<Connection, 'operatorService'>,
  namespace: string,
  attrs: Record<string, SearchAttributeTypeName>,
  log: Log = defaultLog,
): Promise<{ added: string[] }> {
  const missing = async (): Promise<Record<string, IndexedValueType>> => {
    const res = await connection.operatorService.listSearchAttributes({ namespace });
    const existing: Record<string, number> = { ...(res.systemAttributes ?? {}), ...(res.customAttributes ?? {}) };
    const out: Record<string, IndexedValueType> = {};
    for (const [name, typeName] of Object.entries(attrs)) {
      const want = INDEXED_VALUE_TYPES[typeName];
      if (want === undefined) throw new Error(`unknown search attribute type ${String(typeName)} for ${name}`);
      const have = existing[name];
      if (have === undefined) out[name] = want;
      else if (have !== want) {
        throw new Error(
          `search attribute ${name} exists in namespace ${namespace} with type ${typeNameOf(have)}, expected ${typeName}`,
        );
      }
    }
    return out;
  };

  const toAdd = await missing();
  const names = Object.keys(toAdd);
  if (names.length === 0) return { added: [] };
  log(`registering search attributes in namespace ${namespace}: ${names.map((n) => `${n}=${attrs[n]}`).join(', ')}`);
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: toAdd });
  } catch (err) {
    // A concurrent caller won the race: fine as long as the end state is what we want.
    if ((err as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw err;
  }
  const still = Object.keys(await missing());
  if (still.length > 0) throw new Error(`search attributes still missing after add: ${still.join(', ')}`);
  return { added: names };
}

function typeNameOf(v: number): string {
  return (Object.entries(INDEXED_VALUE_TYPES).find(([, n]) => n === v)?.[0] as string | undefined) ?? `#${v}`;
}
