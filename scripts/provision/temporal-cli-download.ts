/**
 * The Temporal SDK's download of a pinned Temporal CLI release (temporal-cli.ts tries it before `go install`), with
 * the bounds sdk-core does not have: its HTTP client has no timeout, so an unreachable host would hold the attempt
 * for the OS's connect timeout (about 2 min on Linux) or, mid-transfer, forever. A probe of the URL sdk-core asks
 * first (and of the archive that names) fails in a second where DNS fails and within `probeMs` where packets are
 * dropped; the whole download has `deadlineMs`.
 */
import fs from 'node:fs';
import path from 'node:path';

type Log = (line: string) => void;

/** A CLI binary the SDK downloaded, and where from (for the log). */
export interface DownloadedCli {
  file: string;
  from: string;
}

/** The host sdk-core downloads from (ephemeral_server/mod.rs, `get_or_download`). */
export const DOWNLOAD_HOST = 'temporal.download';

export interface DownloadLimits {
  /** The probe of the download URL and of the archive it names, both within this. */
  probeMs: number;
  /** The SDK's whole download (and the throw-away server it starts). */
  deadlineMs: number;
  /** The URL sdk-core asks first ({@link sdkDownloadInfoUrl}); tests point it elsewhere. */
  infoUrl?: string;
}

export const DEFAULT_DOWNLOAD_LIMITS: DownloadLimits = {
  probeMs: 10_000,
  deadlineMs: 3 * 60_000,
};

/**
 * The first URL sdk-core fetches for a `cached-download` of the CLI at a fixed version: it answers with JSON
 * `{ archiveUrl, fileToExtract }`. Built as ephemeral_server/mod.rs builds it (`get_or_download("cli", "temporal",
 * Some("tar.gz"))`).
 */
export function sdkDownloadInfoUrl(
  version: string,
  platform: NodeJS.Platform = process.platform,
  arch: string = process.arch,
): string {
  const goPlatform = platform === 'win32' ? 'windows' : platform === 'darwin' ? 'darwin' : 'linux';
  // sdk-core maps x86_64 to amd64 and arm/aarch64 to arm64, and refuses anything else; the probe then fails the same.
  const goArch = arch === 'x64' ? 'amd64' : arch === 'arm64' || arch === 'arm' ? 'arm64' : arch;
  return `https://${DOWNLOAD_HOST}/cli/${version}?arch=${goArch}&platform=${goPlatform}&format=tar.gz`;
}

/** The proxy variable reqwest (the SDK's HTTP client) would use, if one is set. */
function proxyVariable(): string | undefined {
  return ['HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy'].find((name) => process.env[name]);
}

/**
 * Resolves to the archive's URL once both the download URL and the archive it names have answered (headers only;
 * the archive itself is not read), within `timeoutMs`; rejects with why not.
 */
export async function probeDownload(infoUrl: string, timeoutMs: number): Promise<string> {
  const signal = AbortSignal.timeout(timeoutMs);
  let info: unknown;
  try {
    const res = await fetch(infoUrl, { signal, headers: { accept: 'application/json' } });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`${infoUrl} answered ${res.status} ${res.statusText}`);
    }
    info = await res.json();
  } catch (err) {
    throw new Error(fetchFailure(err, infoUrl, timeoutMs));
  }
  const archiveUrl = (info as { archiveUrl?: unknown } | null)?.archiveUrl;
  if (typeof archiveUrl !== 'string') throw new Error(`${infoUrl} answered without an archiveUrl`);
  try {
    const res = await fetch(archiveUrl, { signal });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`${archiveUrl} answered ${res.status} ${res.statusText}`);
  } catch (err) {
    throw new Error(fetchFailure(err, archiveUrl, timeoutMs));
  }
  return archiveUrl;
}

/** `cannot reach temporal.download (getaddrinfo ENOTFOUND temporal.download)`, `… did not answer within 10 s`. */
function fetchFailure(err: unknown, url: string, timeoutMs: number): string {
  // By name, not instanceof: fetch's errors come from Node's own realm, which is not jest's.
  const e = err as { name?: string; message?: string; cause?: unknown } | undefined;
  const host = new URL(url).host;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError')
    return `${host} did not answer within ${seconds(timeoutMs)}`;
  if (e?.name === 'TypeError' && e.message === 'fetch failed' && e.cause) {
    // undici: the socket's error is the cause (an AggregateError with an empty message when every address failed)
    const cause = e.cause as { message?: string; code?: string; errors?: { message?: string }[] };
    const detail = cause.message || cause.errors?.map((c) => c.message).join('; ') || cause.code || String(cause);
    return `cannot reach ${host} (${detail})`;
  }
  return errorText(err);
}

/**
 * The SDK's download of the CLI `version` (`v1.5.1`) into `<dir>/.sdk-download` (kept there as the SDK's cache).
 * Rejects fast when the download host does not answer (see the header), and after `limits.deadlineMs` whatever
 * happens.
 */
export async function sdkDownload(
  dir: string,
  version: string,
  log: Log,
  limits: DownloadLimits = DEFAULT_DOWNLOAD_LIMITS,
): Promise<DownloadedCli> {
  const downloadDir = path.join(dir, '.sdk-download');
  await fs.promises.mkdir(downloadDir, { recursive: true });
  // sdk-core names a fixed-version download `<downloadDir>/temporal-<version>` (ephemeral_server/mod.rs).
  const downloaded = path.join(downloadDir, `temporal-${version}${process.platform === 'win32' ? '.exe' : ''}`);
  if (fs.existsSync(downloaded)) return { file: downloaded, from: `the SDK's earlier download in ${downloadDir}` };

  const infoUrl = limits.infoUrl ?? sdkDownloadInfoUrl(version);
  let from = new URL(infoUrl).host;
  const proxy = proxyVariable();
  if (proxy) {
    log(
      `${proxy} is set: not probing ${from} first (Node's fetch ignores proxies, the SDK's download uses them); ` +
        `the download may take ${seconds(limits.deadlineMs)} to fail`,
    );
  } else {
    log(`asking ${infoUrl} for the Temporal CLI ${version} (${seconds(limits.probeMs)} at most)`);
    from = new URL(await probeDownload(infoUrl, limits.probeMs)).host;
  }

  // Half a download an earlier process left (we hold the install lock, so nobody is writing it): sdk-core would
  // wait 60 s for it to go stale before starting over.
  await fs.promises.rm(`${downloaded}.downloading`, { force: true });
  log(`downloading the Temporal CLI ${version} with @temporalio/testing into ${downloadDir}`);
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  // Starting a throw-away dev server is the only public entry point to the SDK's downloader.
  const settled = TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'cached-download', downloadDir, version, ttl: '3650d' },
      ip: '127.0.0.1',
      log: { format: 'pretty', level: 'error' },
    },
  }).then(
    // Also tears down a server that starts after the deadline below (the native download cannot be cancelled).
    async (env) => {
      await env.teardown();
      return { error: undefined as unknown };
    },
    (error: unknown) => ({ error }),
  );
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    // Not unref'd: it may be all that keeps this process alive while the native download runs.
    timer = setTimeout(() => resolve('deadline'), limits.deadlineMs);
  });
  const outcome = await Promise.race([settled, deadline]).finally(() => clearTimeout(timer));
  if (outcome === 'deadline') {
    throw new Error(`the download from ${from} did not finish within ${seconds(limits.deadlineMs)}`);
  }
  // The download may have succeeded even if the throw-away server missed the SDK's 5 s start deadline.
  if (fs.existsSync(downloaded)) return { file: downloaded, from };
  throw new Error(
    outcome.error === undefined
      ? `the SDK started its server but ${downloaded} is not there (has sdk-core changed its file names?)`
      : errorText(outcome.error),
  );
}

export function errorText(err: unknown): string {
  const message = (err as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : String(err);
}

/** `0.8 s`, `42 s`, `3 min`, `7 min 12 s`. */
export function seconds(ms: number): string {
  if (ms < 10_000) return `${(Math.round(ms / 100) / 10).toString()} s`;
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
}
