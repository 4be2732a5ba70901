/**
 * Containment by cgroup: seed 003's Job Object, on Linux (issue 25, item 2). Each run and each job gets a cgroup of
 * its own; a process moved into it stays there with all its descendants, whatever they do with `setsid` or their
 * environment, so the cgroup's member list is the one a stop must empty. Where no cgroup hierarchy is writable
 * (a user's systemd host without delegation), the process group and the owner token are the containment, as before.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type Containment =
  | { kind: 'cgroup2'; root: string }
  | { kind: 'cgroup1-freezer'; root: string }
  | { kind: 'process-group'; reason: string };

interface Mount {
  root: string;
  mountPoint: string;
  fsType: string;
  superOptions: string[];
}

function mounts(): Mount[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [before, after] = line.split(' - ');
      const fields = before.split(' ');
      const [fsType, , superOptions] = after.split(' ');
      return { root: fields[3], mountPoint: fields[4], fsType, superOptions: (superOptions ?? '').split(',') };
    });
}

/** Where this process's own cgroup of a hierarchy is, as a directory (null when not mounted or not visible). */
function ownCgroupDir(mount: Mount, hierarchy: (controllers: string) => boolean): string | null {
  const line = readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((l) => hierarchy(l.split(':')[1] ?? ''));
  const path = line?.split(':').slice(2).join(':');
  if (path === undefined || !path.startsWith(mount.root)) return null;
  return join(mount.mountPoint, path.slice(mount.root.length));
}

/** A `treewarden` cgroup under this process's own, if one can be made here with the files a stop needs. */
function writableRoot(dir: string | null, needed: string): string | null {
  if (!dir) return null;
  const root = join(dir, 'treewarden');
  const probe = join(root, `probe-${process.pid}`);
  try {
    mkdirSync(probe, { recursive: true });
    const usable = existsSync(join(probe, needed)) && existsSync(join(probe, 'cgroup.procs'));
    rmdirSync(probe);
    return usable ? root : null;
  } catch {
    return null;
  }
}

/** What this host offers, preferring cgroup v2 (`cgroup.kill`), then the v1 freezer, then process groups. */
export function detectContainment(setting: 'auto' | 'process-group'): Containment {
  if (setting === 'process-group') return { kind: 'process-group', reason: 'TREEWARDEN_CONTAINMENT=process-group' };
  let all: Mount[];
  try {
    all = mounts();
  } catch {
    return { kind: 'process-group', reason: '/proc/self/mountinfo is not readable' };
  }
  const v2 = all.find((m) => m.fsType === 'cgroup2');
  const v2Root =
    v2 &&
    writableRoot(
      ownCgroupDir(v2, (c) => c === ''),
      'cgroup.kill',
    );
  if (v2Root) return { kind: 'cgroup2', root: v2Root };
  const v1 = all.find((m) => m.fsType === 'cgroup' && m.superOptions.includes('freezer'));
  const v1Root =
    v1 &&
    writableRoot(
      ownCgroupDir(v1, (c) => c.split(',').includes('freezer')),
      'freezer.state',
    );
  if (v1Root) return { kind: 'cgroup1-freezer', root: v1Root };
  return { kind: 'process-group', reason: 'no writable cgroup hierarchy (v2 with cgroup.kill, or the v1 freezer)' };
}

/** A fresh cgroup for one run or job, or null where containment is by process group. */
export function createWorkCgroup(containment: Containment, workId: string): string | null {
  if (containment.kind === 'process-group') return null;
  const path = join(containment.root, workId);
  mkdirSync(path, { recursive: true });
  return path;
}

/** The pids in a cgroup (empty once it is gone). */
export function cgroupMembers(path: string): number[] {
  try {
    return readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The work ids (run or job) whose cgroups on this host still have live members: the orphan sweep's candidates. */
export function occupiedWorkCgroups(containment: Containment): string[] {
  if (containment.kind === 'process-group') return [];
  try {
    return readdirSync(containment.root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && UUID.test(entry.name))
      .map((entry) => entry.name)
      .filter((id) => cgroupMembers(join(containment.root, id)).length > 0);
  } catch {
    return [];
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** SIGKILL to every member at once: `cgroup.kill` (v2), or freeze, kill and thaw (v1: nobody forks meanwhile). */
export function killCgroup(path: string): void {
  try {
    if (existsSync(join(path, 'cgroup.kill'))) {
      writeFileSync(join(path, 'cgroup.kill'), '1');
      return;
    }
    writeFileSync(join(path, 'freezer.state'), 'FROZEN');
    for (const pid of cgroupMembers(path)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    writeFileSync(join(path, 'freezer.state'), 'THAWED');
  } catch {
    // the cgroup is gone: nothing left in it to kill
  }
}

/** Removes an empty cgroup; one that still has members stays (the orphan sweep stops them, then removes it). */
export function removeCgroup(path: string | null): void {
  if (!path) return;
  try {
    rmdirSync(path);
  } catch {
    // still has members (EBUSY), or already gone
  }
}

/**
 * The command line that starts a supervised command: a shell that moves itself into the cgroup (when there is one)
 * before anything else starts, so not one descendant starts outside. Without an exit file it then becomes the
 * command (same pid, so the process group and the recorded pid stay the command's). With one, it stays as the
 * command's parent and records its exit status there: the agent outlives the worker that started it (issue 25,
 * adoption), and the next worker, which is not its parent, learns the status from the file. The shell waits out
 * SIGTERM and SIGHUP (a trapped signal runs after the command ends) while the command gets them as usual.
 */
export function supervisedStart(
  command: string,
  args: string[],
  where: { cgroupPath: string | null; exitFile: string | null },
): { command: string; args: string[] } {
  return {
    command: '/bin/sh',
    args: ['-c', START_SCRIPT, 'treewarden-run', where.exitFile ?? '', where.cgroupPath ?? '', command, ...args],
  };
}

const START_SCRIPT = [
  'exit_file=$1; cgroup=$2; shift 2',
  'if [ -n "$cgroup" ]; then echo $$ > "$cgroup/cgroup.procs" || exit 125; fi',
  'if [ -z "$exit_file" ]; then exec "$@"; fi',
  'trap : HUP INT TERM',
  '"$@"',
  'status=$?',
  'echo "$status" > "$exit_file.tmp" && mv -f "$exit_file.tmp" "$exit_file"',
  'exit "$status"',
].join('\n');
