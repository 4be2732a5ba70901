/**
 * `terminal/*` as the supervisor serves it (issue 46): a command the agent asks for runs as the supervisor's child, in
 * the workspace, with the agent's own environment. It is inside the run's sandbox and cgroup, so a stop covers it, in
 * a process group of its own, so a kill or a release reaches what it started. Its output is kept up to the byte limit
 * the agent asked for (1 MiB when it names none), cut from the start on a character boundary as ACP says. Every
 * terminal still running when the supervisor ends is killed with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { EnvVariable, TerminalExitStatus, TerminalOutputResponse } from '@agentclientprotocol/sdk';

/** The output kept of a terminal whose agent named no limit. */
export const DEFAULT_OUTPUT_BYTES = 1024 * 1024;
/** Terminals one run may hold at once: an agent that never releases them cannot exhaust the sandbox. */
export const MAX_TERMINALS = 16;

/** A request about a terminal that is not (or no longer) this run's. */
export class UnknownTerminal extends Error {}
/** A create beyond {@link MAX_TERMINALS}. */
export class TooManyTerminals extends Error {}

interface Terminal {
  child: ChildProcess;
  output: Buffer;
  limit: number;
  truncated: boolean;
  exit: Promise<TerminalExitStatus>;
  status: TerminalExitStatus | null;
}

/** The last `limit` bytes of `bytes`, starting on a UTF-8 character boundary. */
export function lastBytes(bytes: Buffer, limit: number): { kept: Buffer; cut: boolean } {
  if (bytes.length <= limit) return { kept: bytes, cut: false };
  let start = bytes.length - limit;
  while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++; // a continuation byte: not a boundary
  return { kept: bytes.subarray(start), cut: true };
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

export class Terminals {
  private readonly live = new Map<string, Terminal>();

  constructor(private readonly agentEnv: Record<string, string>) {}

  /** Starts `command` in `cwd` (already confined to the workspace); answers the terminal's id. */
  create(command: string, args: string[], cwd: string, env: EnvVariable[], limit: number | null | undefined): string {
    if (this.live.size >= MAX_TERMINALS)
      throw new TooManyTerminals(`${MAX_TERMINALS} terminals are open: release one before creating another`);
    const extra = Object.fromEntries(env.map((v) => [v.name, v.value]));
    const child = spawn(command, args, {
      cwd,
      env: { ...this.agentEnv, ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const terminal: Terminal = {
      child,
      output: Buffer.alloc(0),
      limit: limit && limit > 0 ? Math.min(limit, DEFAULT_OUTPUT_BYTES * 16) : DEFAULT_OUTPUT_BYTES,
      truncated: false,
      status: null,
      exit: new Promise((resolve) => {
        const settle = (status: TerminalExitStatus) => {
          terminal.status ??= status;
          resolve(terminal.status);
        };
        child.once('error', (error) => {
          if (child.pid !== undefined) return; // a failed kill, not a failed start
          terminal.output = Buffer.from(`cannot run ${command}: ${error.message}\n`);
          settle({ exitCode: 127, signal: null });
        });
        child.once('exit', (code, signal) => settle({ exitCode: code, signal }));
      }),
    };
    const collect = (chunk: Buffer) => {
      const { kept, cut } = lastBytes(Buffer.concat([terminal.output, chunk]), terminal.limit);
      terminal.output = kept;
      terminal.truncated ||= cut;
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const id = `term-${randomUUID()}`;
    this.live.set(id, terminal);
    return id;
  }

  output(id: string): TerminalOutputResponse {
    const t = this.terminal(id);
    return { output: t.output.toString('utf8'), truncated: t.truncated, exitStatus: t.status };
  }

  waitForExit(id: string): Promise<TerminalExitStatus> {
    return this.terminal(id).exit;
  }

  /** Kills the command (its whole group); the terminal stays, its output readable, until released. */
  kill(id: string): void {
    signalGroup(this.terminal(id).child, 'SIGKILL');
  }

  /** Kills the command if it still runs and forgets the terminal. */
  release(id: string): void {
    this.kill(id);
    this.live.delete(id);
  }

  /** The supervisor ends: nothing it started for the agent outlives it. */
  releaseAll(): void {
    for (const id of [...this.live.keys()]) this.release(id);
  }

  private terminal(id: string): Terminal {
    const t = this.live.get(id);
    if (!t) throw new UnknownTerminal(`terminal ${id} is not open in this run`);
    return t;
  }
}
