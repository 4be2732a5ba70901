/**
 * Structured process identity from /proc: a process belongs to a run or job when it sits in its
 * cgroup (processes/cgroups.ts) or, where the host has none, carries the owner token in its environment
 * or sits in the recorded process group. Command lines are shown, never matched, and the supervisor and
 * its ancestors are never candidates, so an inspection can never find itself. Reading /proc spawns nothing.
 */
import type { FirstLayer } from '../domain/acp-stop';
import { readdirSync, readFileSync } from 'node:fs';
import type { ProcessInfo } from '../domain/host-probe';
import { cgroupMembers, killCgroup } from './cgroups';

/** after SIGKILL the kernel reaps within milliseconds; this only bounds a pathological wait */
const KILL_SETTLE_MS = 2_000;

export interface ProcessOwner {
  ownerToken: string | null;
  processGroupId: number | null;
  /** when the group's leader (pid = processGroupId) started, as recorded at its spawn: the group's identity */
  processStartTime?: string | null;
  /** the run's or job's own cgroup, where the host has them */
  cgroupPath?: string | null;
}

export const OWNER_TOKEN_ENV = 'TREEWARDEN_OWNER_TOKEN';

function readStat(pid: number): Omit<ProcessInfo, 'command'> & { zombie: boolean; startTime: string } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // the command name may contain spaces and parentheses: fields start after the last ')'
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    pid,
    zombie: fields[0] === 'Z' || fields[0] === 'X',
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    cpuTicks: Number(fields[11]) + Number(fields[12]),
    // clock ticks after boot: with the pid, an identity no later process can share
    startTime: fields[19],
  };
}

function selfAndAncestors(): Set<number> {
  const chain = new Set<number>();
  for (let pid = process.pid; pid > 1 && !chain.has(pid);) {
    chain.add(pid);
    try {
      pid = readStat(pid).ppid;
    } catch {
      break;
    }
  }
  return chain;
}

/**
 * Live (non-zombie) processes of the owner. Where it has a cgroup, its members are the whole answer, with the group
 * leader for the instant before the start shell enters the cgroup: one small read instead of a read of every process
 * on the host, which a stop repeats every 100 ms. Elsewhere, every process carrying its token or in its group.
 */
export function ownedProcesses(owner: ProcessOwner): ProcessInfo[] {
  const excluded = selfAndAncestors();
  const members = owner.cgroupPath ? new Set(cgroupMembers(owner.cgroupPath)) : null;
  const group = recordedGroup(owner);
  const candidates = members ? [...members, group ?? 0] : readdirSync('/proc').map(Number);
  const needle = !members && owner.ownerToken ? `${OWNER_TOKEN_ENV}=${owner.ownerToken}` : null;
  const found: ProcessInfo[] = [];
  for (const pid of new Set(candidates)) {
    if (!Number.isInteger(pid) || pid <= 0 || excluded.has(pid)) continue;
    try {
      const stat = readStat(pid);
      if (stat.zombie) continue;
      const inGroup = members?.has(pid) || (group !== null && stat.pgid === group);
      const tokenMatch =
        !inGroup && needle !== null && readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(needle);
      if (!inGroup && !tokenMatch) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      found.push({ pid, ppid: stat.ppid, pgid: stat.pgid, cpuTicks: stat.cpuTicks, command });
    } catch {
      // exited while we looked, or not ours to read: either way not a live process of this owner
    }
  }
  return found.sort((a, b) => a.pid - b.pid);
}

/** Every owner token carried by a live process of this host (orphan reaping starts from these). */
export function liveOwnerTokens(): Set<string> {
  const excluded = selfAndAncestors();
  const prefix = `${OWNER_TOKEN_ENV}=`;
  const tokens = new Set<string>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || excluded.has(pid)) continue;
    try {
      if (readStat(pid).zombie) continue;
      const variable = readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .find((v) => v.startsWith(prefix));
      if (variable) tokens.add(variable.slice(prefix.length));
    } catch {
      // exited while we looked, or not ours to read
    }
  }
  return tokens;
}

/** CPU clock ticks the owner's live processes have used: silence grading's sign that an agent is working. */
export const cpuTicksOf = (owner: ProcessOwner): number =>
  ownedProcesses(owner).reduce((sum, p) => sum + p.cpuTicks, 0);

export const isAlive = (pid: number): boolean => processStartTime(pid) !== null;

/** When a live process started (its /proc start time), or null when it is gone. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readStat(pid);
    return stat.zombie ? null : stat.startTime;
  } catch {
    return null;
  }
}

/** True while the process that had this pid at `startTime` lives: a pid the kernel reused is another process. */
export const isSameProcessAlive = (pid: number, startTime: string): boolean => processStartTime(pid) === startTime;

/**
 * The owner's recorded process group, or null once its id names another process: its leader's pid alive with another
 * start time is a pid the kernel reused, and that process's group is not the owner's to signal or count. A group
 * whose leader has exited stays the owner's: while any member lives the kernel hands its id to no new process.
 * (Rows recorded before start times were have only the id to go by.)
 */
export function recordedGroup(owner: ProcessOwner): number | null {
  const pgid = owner.processGroupId;
  if (pgid === null || !owner.processStartTime) return pgid;
  const leaderNow = processStartTime(pgid);
  return leaderNow === null || leaderNow === owner.processStartTime ? pgid : null;
}

/**
 * Signals every listed process and each distinct group (SIGKILL reaches the ones that left it); a SIGKILL also kills
 * the whole cgroup at once, so nothing forks away between the listing and the signal.
 */
export function signalAll(
  processes: ProcessInfo[],
  groups: (number | null)[],
  signal: NodeJS.Signals,
  cgroupPath: string | null = null,
): void {
  if (signal === 'SIGKILL' && cgroupPath) killCgroup(cgroupPath);
  for (const pgid of new Set(groups.filter((g): g is number => g !== null))) {
    try {
      process.kill(-pgid, signal);
    } catch {
      // group already gone
    }
  }
  for (const p of processes) {
    try {
      process.kill(p.pid, signal);
    } catch {
      // already gone
    }
  }
}

/** Live holders of a writer lock file (it holds the writer's pid); a stale file holds nobody. */
export function writersAlive(lockFile: string | null): number[] {
  if (!lockFile) return [];
  try {
    const pid = Number(readFileSync(lockFile, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? [pid] : [];
  } catch {
    return [];
  }
}

export interface StopAttempt {
  signal: 'SIGTERM' | 'SIGKILL';
  verdict: 'terminal-clean' | 'stop-partial';
  survivors: Pick<ProcessInfo, 'pid' | 'pgid' | 'command'>[];
  writersAlive: number;
}

export interface StopResult {
  verdict: 'terminal-clean' | 'stop-partial';
  attempts: StopAttempt[];
  verifiedAt: string;
  /** an `acp` run's first layer: how many supervisors this stop signalled alone, and whether all had exited in time */
  firstLayer?: { signalled: number; exited: boolean };
}

/** Those of `processes` whose environment carries the variable `name`. */
export function carrying(processes: ProcessInfo[], name: string): ProcessInfo[] {
  const prefix = `${name}=`;
  return processes.filter((p) => {
    try {
      return readFileSync(`/proc/${p.pid}/environ`, 'utf8')
        .split('\0')
        .some((v) => v.startsWith(prefix));
    } catch {
      return false; // exited while we looked
    }
  });
}

/** SIGTERM to the first layer's processes alone (not their group: the agent is the supervisor's to end). */
export function signalFirstLayer(owner: ProcessOwner, first: FirstLayer): ProcessInfo[] {
  const leads = carrying(ownedProcesses(owner), first.mark);
  signalAll(leads, [], 'SIGTERM');
  return leads;
}

/**
 * With a first layer, its processes get SIGTERM alone and are waited for (bounded) before anything else is signalled.
 * A stop is clean only when the owner is gone, no descendant lives (in its cgroup, in the group or,
 * having left it by setsid or a double fork, by owner token) and no writer holds the lock: where cgroups
 * exist, an empty cgroup. SIGTERM first and
 * a grace period; survivors are reported as `stop-partial`, then SIGKILLed and verified again.
 */
export async function verifiedStop(
  owner: ProcessOwner,
  lockFile: string | null,
  graceMs: number,
  beat: () => void,
  first: FirstLayer | null = null,
): Promise<StopResult> {
  const attempts: StopAttempt[] = [];
  const survey = (signal: StopAttempt['signal']): StopAttempt => {
    const survivors = ownedProcesses(owner).map(({ pid, pgid, command }) => ({ pid, pgid, command }));
    const writers = writersAlive(lockFile).length;
    const verdict = survivors.length === 0 && writers === 0 ? 'terminal-clean' : 'stop-partial';
    return { signal, verdict, survivors, writersAlive: writers };
  };
  const waitUntil = async (ms: number, done: () => boolean) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline && !done()) {
      beat();
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const waitUntilGone = (ms: number) =>
    waitUntil(ms, () => ownedProcesses(owner).length === 0 && writersAlive(lockFile).length === 0);
  let firstLayer: StopResult['firstLayer'];
  if (first) {
    // none left when the worker that ran the command signalled them already, at the stop's start
    const leads = signalFirstLayer(owner, first);
    const gone = () => carrying(ownedProcesses(owner), first.mark).length === 0;
    await waitUntil(first.withinMs, gone);
    firstLayer = { signalled: leads.length, exited: gone() };
  }
  signalAll(ownedProcesses(owner), [recordedGroup(owner)], 'SIGTERM');
  await waitUntilGone(graceMs);
  attempts.push(survey('SIGTERM'));
  if (attempts[0].verdict === 'stop-partial') {
    // a writer that is ours is among the owned processes; one that is not ours is reported, never signalled
    signalAll(ownedProcesses(owner), [recordedGroup(owner)], 'SIGKILL', owner.cgroupPath ?? null);
    await waitUntilGone(KILL_SETTLE_MS);
    attempts.push(survey('SIGKILL'));
  }
  const verdict = attempts[attempts.length - 1].verdict;
  return { verdict, attempts, verifiedAt: new Date().toISOString(), ...(firstLayer ? { firstLayer } : {}) };
}
