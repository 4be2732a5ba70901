/** Pids across the agent sandbox's PID namespace: an agent reports the pids it sees, the host lists its own. */
import { readdirSync, readFileSync } from 'node:fs';

/** The pids a process has, outermost (this host's) first: its status's NSpid line. */
function nsPids(pid: number): string[] {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return /^NSpid:(.*)$/m.exec(status)?.[1].trim().split(/\s+/) ?? [];
  } catch {
    return [];
  }
}

/**
 * The host pid of the process an agent calls `nsPid` in its sandbox: among `candidates` (the run's processes), the
 * one whose innermost pid it is; null when none is (yet). Every host process is searched when none are given.
 */
export function hostPidOf(nsPid: number, candidates?: number[]): number | null {
  const pool = candidates ?? readdirSync('/proc').map(Number).filter(Number.isInteger);
  const found = pool.filter((pid) => nsPids(pid).at(-1) === String(nsPid) && nsPids(pid).length > 1);
  return found.length === 1 ? found[0] : null;
}
