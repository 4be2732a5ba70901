/**
 * The install lock: `<cache>/.<what>-install.lock` (pid + host, heartbeated) serialises installs so two callers (two
 * jest processes, `npm start` + `npm test`) don't build at once. It is an efficiency measure only: installers build
 * into a private staging dir and move the result into place with an atomic rename.
 */
import fs from 'node:fs';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive } from '../../processes/process-table';

type Log = (line: string) => void;

interface LockInfo {
  pid: number;
  host: string;
  startedAt: string;
}

const LOCK_HEARTBEAT_MS = 15_000;
/** A lock whose mtime is older than this is considered abandoned (holder heartbeats every 15 s). */
const LOCK_STALE_MS = 2 * 60_000;
const LOCK_WAIT_MAX_MS = 60 * 60_000;

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
  if (holder && holder.host === os.hostname() && !isAlive(holder.pid)) return { stale: true, holder };
  if (!holder && age > 10_000) return { stale: true };
  return { stale: false, holder };
}

/** `what` names the install in the waiting line (the Temporal CLI by default). */
export async function withInstallLock<T>(
  lockPath: string,
  log: Log,
  fn: () => Promise<T>,
  what = 'the temporal CLI',
): Promise<T> {
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
        `another process (${holder ? `pid ${holder.pid} on ${holder.host}` : 'unknown'}) ` +
          `is installing ${what}; waiting (${Math.round((Date.now() - waitStart) / 1000)}s)`,
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
