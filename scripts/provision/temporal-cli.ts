/**
 * Temporal CLI provisioning: install a pinned `temporal` binary into a user-level cache (temporal-dev-server.ts runs
 * it).
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
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { goInstallBinaries } from './go-install';
import { withInstallLock } from './install-lock';

export const TEMPORAL_CLI_VERSION = '1.5.1';
const CLI_MODULE = 'github.com/temporalio/cli';
const CLI_PACKAGE = `${CLI_MODULE}/cmd/temporal`;

export type Log = (line: string) => void;

export const defaultLog: Log = (line) => {
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
      `could not obtain temporal CLI ${version}: ` +
        `'go' is not on PATH and the SDK download failed: ${String(startError)}`,
    );
  }
  const tmp = `${bin}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await fs.promises.copyFile(downloaded, tmp);
  await fs.promises.chmod(tmp, 0o755);
  await fs.promises.rename(tmp, bin);
}
