/** Runs the service's own processes (worker, api) under the CLI, passing signals on exactly once. */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import path from 'node:path';

/** `tsx <script>` with inherited stdio; resolves with the exit code to pass on. */
export function runScript(script: string): Promise<number> {
  // Its own process group, so signals reach it only through us, exactly once: a terminal's Ctrl-C
  // hits our group and tsx may relay the same signal to us again, but a second SIGINT in the child
  // would skip its graceful drain. A repeat after the window (an impatient second Ctrl-C) is passed on.
  const child = spawn(process.execPath, [require.resolve('tsx/cli'), path.join(__dirname, '..', script)], {
    stdio: 'inherit',
    detached: true,
  });
  const lastForwarded = new Map<NodeJS.Signals, number>();
  const forward = (signal: NodeJS.Signals) => {
    if (Date.now() - (lastForwarded.get(signal) ?? 0) > 1_000) child.kill(signal);
    lastForwarded.set(signal, Date.now());
  };
  // kept until we exit: a relayed duplicate arriving after the child is gone must not kill us (exit 130)
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)));
  });
}
