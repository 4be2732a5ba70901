/**
 * @module A stop signals a recorded process group only while it is still the one recorded (issue 44, item 4): the
 * group's id with its leader's start time. A pid the kernel handed to an unrelated process, which leads a group of
 * its own, is neither counted as the owner's nor signalled; a group whose leader has exited is still stopped.
 * Real processes, no stack: the identity check sits under every stop (verifiedStop, a supervisor's stop, orphans).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { ownedProcesses, processStartTime, verifiedStop, type ProcessOwner } from '../processes/process-table';
import { eventually } from '../testing/harness';

const started: ChildProcess[] = [];
afterAll(() => {
  // each group, whatever a failed test left in it
  for (const child of started) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // the group is gone
    }
  }
});

/**
 * A process leading a group of its own (setsid), as a reused pid's new owner would; it reads its start time before
 * the script can end (the script waits for its stdin, which `release()` closes). `ended`: how it ended.
 */
async function groupLeader(script: string) {
  const child = spawn('sh', ['-c', script], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  started.push(child);
  const ended = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  );
  const startTime = await eventually('the leader started', async () => processStartTime(child.pid!));
  return { pid: child.pid!, startTime, ended, release: () => child.stdin!.end() };
}

/** An owner that recorded `pid` as its group when another process had it: same id, an earlier start time. */
const ownerBefore = (pid: number, startTime: string): ProcessOwner => ({
  ownerToken: `not-carried-${randomUUID()}`,
  processGroupId: pid,
  processStartTime: String(BigInt(startTime) - 1n),
  cgroupPath: null,
});

test('a recorded group whose id now leads an unrelated process: not the owner’s, and a stop leaves it alone', async () => {
  const unrelated = await groupLeader('exec sleep 600');
  const owner = ownerBefore(unrelated.pid, unrelated.startTime);
  expect(ownedProcesses(owner)).toEqual([]);

  const stop = await verifiedStop(owner, null, 200, () => undefined);
  expect(stop).toMatchObject({ verdict: 'terminal-clean', attempts: [{ signal: 'SIGTERM', survivors: [] }] });
  // had the stop signalled its group, it would have ended by that SIGTERM; it ends by this SIGKILL instead
  process.kill(unrelated.pid, 'SIGKILL');
  expect(await unrelated.ended).toBe('SIGKILL');
});

test('the same group with its recorded start time is the owner’s: counted and stopped', async () => {
  const ours = await groupLeader('exec sleep 600');
  const owner = { ...ownerBefore(ours.pid, ours.startTime), processStartTime: ours.startTime };
  expect(ownedProcesses(owner).map((p) => p.pid)).toEqual([ours.pid]);

  const stop = await verifiedStop(owner, null, 5_000, () => undefined);
  expect(stop.verdict).toBe('terminal-clean');
  expect(await ours.ended).toBe('SIGTERM');
});

test('a group whose leader exited is still the owner’s: its members are stopped', async () => {
  // the leader forks a member that stays in its group, then exits; the member keeps the group's id alive
  const leader = await groupLeader('sleep 600 & read -r _; exit 0');
  leader.release();
  expect(await leader.ended).toBe(0);
  const owner = { ...ownerBefore(leader.pid, leader.startTime), processStartTime: leader.startTime };
  const members = await eventually('the member alone in the group', async () => {
    const found = ownedProcesses(owner);
    return found.length === 1 && found[0].command === 'sleep 600' ? found : null;
  });

  const stop = await verifiedStop(owner, null, 5_000, () => undefined);
  expect(stop.verdict).toBe('terminal-clean');
  expect(processStartTime(members[0].pid)).toBeNull();
});
