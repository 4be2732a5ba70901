/** Child processes of provisioning: line-wise output, and no orphans when this process exits or dies hard. */
import { spawn, type ChildProcess } from 'node:child_process';

/** Kill `child` if this process exits first; returns the unregister function. */
export function killOnExit(child: ChildProcess): () => void {
  const onExit = () => {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  };
  process.on('exit', onExit);
  return () => process.off('exit', onExit);
}

export function lineReader(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  if (!stream) return;
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, i).replace(/\r$/, ''));
      buf = buf.slice(i + 1);
    }
  });
  stream.on('end', () => {
    if (buf) onLine(buf);
    buf = '';
  });
}

/** Shell watchdog: kills the server (TERM, then KILL after 10 s) once our process is gone, even after a SIGKILL. */
const WATCHDOG_SH = `
parent=$1; child=$2
while kill -0 "$parent" 2>/dev/null; do
  kill -0 "$child" 2>/dev/null || exit 0
  sleep 1
done
kill -TERM "$child" 2>/dev/null || exit 0
i=0
while [ $i -lt 10 ] && kill -0 "$child" 2>/dev/null; do sleep 1; i=$((i+1)); done
kill -KILL "$child" 2>/dev/null
exit 0
`;

/**
 * Starts the {@link WATCHDOG_SH} guard for `pid` (POSIX only): it kills `pid` if this process dies without stopping
 * it. SIGKILL the returned process once `pid` has been stopped normally.
 */
export function spawnOrphanWatchdog(pid: number): ChildProcess | undefined {
  if (process.platform === 'win32') return undefined;
  const watchdog = spawn('sh', ['-c', WATCHDOG_SH, 'treewarden-temporal-watchdog', String(process.pid), String(pid)], {
    detached: true,
    stdio: 'ignore',
  });
  watchdog.on('error', () => undefined); // no sh: the 'exit' hook still applies
  watchdog.unref();
  return watchdog;
}
