/** `go install` of pinned binaries into a cache dir, with progress lines and an atomic move into place. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { killOnExit, lineReader } from './child-processes';

type Log = (line: string) => void;

function formatElapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
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
        `go install of ${what} failed (exit ${code ?? 'signal'}) after ${formatElapsed(Date.now() - started)}:\n` +
          tail.join('\n'),
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
