/**
 * Temporal CLI provisioning: install a pinned `temporal` binary into a user-level cache (temporal-dev-server.ts runs
 * it).
 *
 * Install order (no manual step either way). The download goes first because a compiler is slow: a first
 * `npm install && npm start` on a fresh machine took 508 s, 441 s of them in `go install` (issue 45).
 *   1. `${XDG_CACHE_HOME:-$HOME/.cache}/treewarden/bin/temporal` exists and `--version` says 1.5.1 → use it.
 *   2. The Temporal SDK's download of the pinned release: `TestWorkflowEnvironment.createLocal` with a
 *      `cached-download` executable (version v1.5.1, into `<cache>/.sdk-download`), then the downloaded binary is
 *      copied to `<cache>/temporal`. It takes seconds where the download host answers. sdk-core asks
 *      https://temporal.download/cli/v1.5.1 for the archive's URL with no timeout at all (ephemeral_server/mod.rs),
 *      so a probe of that URL and of the archive it names goes first, 10 s at most (skipped when a proxy is
 *      configured, since Node's fetch ignores proxies and the SDK's client uses them). An unreachable host fails the
 *      attempt in well under a second (DNS) or in 10 s (dropped packets), not after the OS's connect timeout. The
 *      whole download has a 3 min limit, and the binary must say 1.5.1 (temporal-cli-download.ts).
 *   3. If the download failed and `go` is on PATH, then
 *      `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` (5–10 min cold on 2 cores). v1.5.1 is pinned on
 *      purpose: every release >= v1.6.0 has a `replace` directive in go.mod and cannot be `go install`ed.
 *   4. If neither works, the error names both failures.
 * It logs which path it took, why, and how long it took.
 *
 * Concurrency: installs are serialised by `<cache>/.temporal-install.lock` (pid + host, heartbeated) so two
 * callers (two jest processes, `npm start` + `npm test`) don't install at once. The lock is an efficiency measure
 * only: the binary is built or copied into a private staging path and moved into place with an atomic rename, so
 * even a broken lock never exposes a half-written binary.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { goInstallBinaries } from './go-install';
import { DOWNLOAD_HOST, errorText, sdkDownload, seconds, type DownloadedCli } from './temporal-cli-download';
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
 * {@link temporalCacheDir} first if needed (the SDK's download, else go install). Safe to call concurrently.
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
    await installTemporalCli(dir, bin, log);
  });

  const version = await temporalCliVersionOk(bin);
  if (!version) {
    throw new Error(`temporal CLI at ${bin} does not report version ${TEMPORAL_CLI_VERSION} after install`);
  }
  log(`installed ${bin}: ${version}`);
  return bin;
}

/** Where the CLI came from: the Temporal SDK's download, or its `go install` fallback. */
export type CliInstallPath = 'download' | 'go install';

/** The ways {@link installTemporalCli} obtains the binary (tests pass their own). */
export interface CliSources {
  /** The SDK's download of the pinned CLI; rejects with the reason when it cannot. */
  download: (dir: string, log: Log) => Promise<DownloadedCli>;
  /** The `go` binary on PATH, if any. */
  findGo: () => string | undefined;
  /** Builds the pinned CLI and moves it to `bin` (atomic rename). */
  goInstall: (go: string, dir: string, bin: string, log: Log) => Promise<void>;
}

export const defaultCliSources: CliSources = {
  download: (dir, log) => sdkDownload(dir, `v${TEMPORAL_CLI_VERSION}`, log),
  findGo: () => findOnPath('go'),
  goInstall,
};

/**
 * Puts the pinned CLI at `bin`: the SDK's download first, `go install` if that fails, an error naming both failures
 * if neither works. Logs which path it took, why, and how long it took. Call it under the install lock.
 */
export async function installTemporalCli(
  dir: string,
  bin: string,
  log: Log,
  sources: CliSources = defaultCliSources,
): Promise<CliInstallPath> {
  const started = Date.now();
  let downloadFailure: string;
  try {
    const downloaded = await sources.download(dir, log);
    await placeDownloaded(downloaded.file, bin);
    log(
      `downloaded the Temporal CLI ${TEMPORAL_CLI_VERSION} from ${downloaded.from} (${seconds(Date.now() - started)})`,
    );
    return 'download';
  } catch (err) {
    downloadFailure = `${errorText(err)}, ${seconds(Date.now() - started)}`;
  }

  const go = sources.findGo();
  if (!go) {
    throw new Error(
      `could not install the Temporal CLI ${TEMPORAL_CLI_VERSION}: the Temporal SDK's download failed ` +
        `(${downloadFailure}), and 'go' is not on PATH for the fallback ` +
        `(go install ${CLI_PACKAGE}@v${TEMPORAL_CLI_VERSION}). ` +
        `Allow HTTPS to ${DOWNLOAD_HOST} or install Go (https://go.dev/dl/), then try again.`,
    );
  }
  log(
    `the Temporal SDK's download of the CLI failed (${downloadFailure}); ` +
      `building it with go install (5-10 min on 2 cores)`,
  );
  const building = Date.now();
  try {
    await sources.goInstall(go, dir, bin, log);
  } catch (err) {
    throw new Error(
      `could not install the Temporal CLI ${TEMPORAL_CLI_VERSION}: the Temporal SDK's download failed ` +
        `(${downloadFailure}), and so did the go install fallback: ${errorText(err)}`,
    );
  }
  log(`built the Temporal CLI ${TEMPORAL_CLI_VERSION} with go install (${seconds(Date.now() - building)})`);
  return 'go install';
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

/** Copies a downloaded binary next to `bin`, checks that it says the pinned version, then renames it into place. */
async function placeDownloaded(file: string, bin: string): Promise<void> {
  const tmp = `${bin}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await fs.promises.copyFile(file, tmp);
    await fs.promises.chmod(tmp, 0o755);
    if (!(await temporalCliVersionOk(tmp))) {
      // Not the pinned release (or not a binary for this machine): the next attempt downloads it again.
      await fs.promises.rm(file, { force: true });
      throw new Error(`the downloaded ${file} does not say 'temporal version ${TEMPORAL_CLI_VERSION}'`);
    }
    await fs.promises.rename(tmp, bin);
  } finally {
    await fs.promises.rm(tmp, { force: true });
  }
}
