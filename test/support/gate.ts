/**
 * A gate agents wait at without spinning: the test holds an exclusive `flock` on a file, and each agent takes a
 * shared lock on it (blocked in the kernel, no CPU) before it exits. A hundred agents polling a file with `sleep`
 * kept a 2-core host at load 27, so supervision heartbeats arrived late and the test measured the load instead.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Gate {
  /** an agent adapter that waits for the gate to open, then runs `seconds` more (0: exits at once) */
  agent(seconds: number): { type: 'process'; command: string; args: string[] };
  /** opens the gate: every waiting agent, and every later one, passes */
  open(): Promise<void>;
  /** opens it if still closed, and removes its file (after the last agent) */
  remove(): Promise<void>;
}

/** Resolves once the gate is closed (the exclusive lock is held), so no agent passes before `open()`. */
export async function closedGate(): Promise<Gate> {
  const dir = mkdtempSync(join(tmpdir(), 'treewarden-gate-'));
  const lockFile = join(dir, 'gate');
  // the holder prints once it has the lock, then keeps it until its stdin ends
  const holder: ChildProcessWithoutNullStreams = spawn('flock', ['-x', lockFile, 'sh', '-c', 'echo held; exec cat']);
  const exited = once(holder, 'exit');
  const [held] = (await once(holder.stdout, 'data')) as [Buffer];
  if (held.toString().trim() !== 'held') throw new Error(`the gate's lock holder said ${held.toString()}`);
  const open = async () => {
    holder.stdin.end();
    await exited;
  };
  return {
    agent: (seconds) => ({ type: 'process', command: 'flock', args: ['-s', lockFile, 'sleep', String(seconds)] }),
    open,
    async remove() {
      await open();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
