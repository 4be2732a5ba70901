/**
 * CPU seconds spent by each part of a stack, read from /proc (utime + stime, plus the reaped children's cutime +
 * cstime: PostgreSQL backends that exited are counted in their postmaster). Scenario 8 uses it to say where the
 * time of a request goes, and what its load generator, a child process that has exited, cost.
 */
import fs from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

interface ProcStat {
  pid: number;
  ppid: number;
  ownTicks: number;
  reapedChildTicks: number;
}

function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // exited meanwhile
  }
  // the command name (field 2) may contain spaces and parentheses: fields resume after the last ')'
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const n = (i: number) => Number(fields[i - 3]);
  return { pid, ppid: n(4), ownTicks: n(14) + n(15), reapedChildTicks: n(16) + n(17) };
}

function allStats(): ProcStat[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .flatMap((e) => readStat(Number(e)) ?? []);
}

/** CPU seconds of each root process and its descendants (reaped ones included). */
export function cpuSeconds(roots: Record<string, number>): Record<string, number> {
  const stats = allStats();
  const children = new Map<number, ProcStat[]>();
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  const byPid = new Map(stats.map((s) => [s.pid, s]));
  const treeTicks = (pid: number): number => {
    const self = byPid.get(pid);
    if (!self) return 0;
    return (
      self.ownTicks + self.reapedChildTicks + (children.get(pid) ?? []).reduce((sum, c) => sum + treeTicks(c.pid), 0)
    );
  };
  return Object.fromEntries(Object.entries(roots).map(([role, pid]) => [role, treeTicks(pid) / TICKS_PER_SECOND]));
}

function runningStat(pid: number): ProcStat {
  const stat = readStat(pid);
  if (!stat) throw new Error(`no process ${pid} on this machine`);
  return stat;
}

/** CPU seconds of the children of `pid` that exited and were reaped (cutime + cstime). */
export const reapedChildrenCpuSeconds = (pid: number): number => runningStat(pid).reapedChildTicks / TICKS_PER_SECOND;

export const parentOf = (pid: number): number => runningStat(pid).ppid;

/** The child of `parent` whose command line contains `marker`. */
export function childWith(parent: number, marker: string): number {
  const child = allStats().find(
    (s) => s.ppid === parent && fs.readFileSync(`/proc/${s.pid}/cmdline`, 'utf8').includes(marker),
  );
  if (!child) throw new Error(`process ${parent} has no child running ${marker}`);
  return child.pid;
}
