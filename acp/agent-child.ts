/**
 * The agent as the supervisor's child: its own process group (so ending it reaches the tools it started), stdin and
 * stdout carrying ACP, stderr passed through to the run's output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { ndJsonStream, type Stream } from '@agentclientprotocol/sdk';

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** set when the command could not be started at all */
  spawnError: string | null;
}

export const describeExit = (s: ExitStatus): string =>
  s.spawnError !== null
    ? `could not start: ${s.spawnError}`
    : s.signal !== null
      ? `was killed by ${s.signal}`
      : `exited with code ${s.code}`;

export interface AgentChild {
  stream: Stream;
  /** settles when the process is gone (or never started) */
  exited: Promise<ExitStatus>;
  /** the exit, once known */
  status(): ExitStatus | null;
  /** SIGTERM to its group, then SIGKILL after `graceMs`; resolves once it is gone (or after the bound) */
  end(graceMs: number): Promise<ExitStatus | null>;
  /** SIGKILL to its group at once: the last thing a supervisor that has to die does */
  killNow(): void;
}

const KILL_SETTLE_MS = 2_000;

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** `promise`'s outcome, or null once `ms` have passed first. */
export const within = <T>(promise: Promise<T>, ms: number): Promise<T | null> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(null), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });

export function startAgent(command: readonly string[], cwd: string, env: Record<string, string>): AgentChild {
  const child = spawn(command[0], command.slice(1), { cwd, env, stdio: ['pipe', 'pipe', 'inherit'], detached: true });
  let known: ExitStatus | null = null;
  const exited = new Promise<ExitStatus>((resolve) => {
    const settle = (status: ExitStatus) => {
      known ??= status;
      resolve(known);
    };
    child.once('error', (error) => {
      // an error after the spawn (a failed kill) is no exit: only a child that never got a pid ends here
      if (child.pid === undefined) settle({ code: null, signal: null, spawnError: error.message });
    });
    child.once('exit', (code, signal) => settle({ code, signal, spawnError: null }));
  });
  // a write to an agent that has gone fails its request; it must not become an unhandled 'error' event
  child.stdin?.on('error', () => undefined);
  child.stdout?.on('error', () => undefined);
  const stream = ndJsonStream(
    Writable.toWeb(child.stdin!) as unknown as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>,
  );
  return {
    stream,
    exited,
    status: () => known,
    end: async (graceMs) => {
      signalGroup(child, 'SIGTERM'); // the agent's tools too, when the agent itself has already gone
      if (known) return known;
      const ended = await within(exited, graceMs);
      if (ended) return ended;
      signalGroup(child, 'SIGKILL');
      return within(exited, KILL_SETTLE_MS);
    },
    killNow: () => signalGroup(child, 'SIGKILL'),
  };
}
