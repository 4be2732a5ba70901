/**
 * Bench scripts run as processes of their own (`node --import tsx bench/<file>`): scenario 2's load generator and
 * its floor's worker, so that neither shares the bench's event loop with what it measures.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

const benchProcessArgs = (file: string) => ['--import', 'tsx', path.join(__dirname, file)];

/**
 * Runs a bench script (`node --import tsx bench/<file>`) as a process of its own: `input` as JSON on its stdin, its
 * last stdout line parsed as JSON; rejects with its stderr when it exits other than 0.
 */
export async function runBenchProcess<T>(file: string, input: unknown): Promise<T> {
  const child = spawn(process.execPath, benchProcessArgs(file), { stdio: ['pipe', 'pipe', 'pipe'] });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout.on('data', (d: Buffer) => stdout.push(d.toString()));
  child.stderr.on('data', (d: Buffer) => stderr.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.stdin.end(JSON.stringify(input));
  const code = await exited;
  if (code !== 0) throw new Error(`bench/${file} exited (${code}):\n${stderr.join('')}`);
  return JSON.parse(stdout.join('').trim().split('\n').pop()!) as T;
}

/** A long-lived bench script, started with `env`, ready once it prints `readyLine`; `stop()` sends SIGTERM. */
export async function startBenchProcess(
  file: string,
  env: NodeJS.ProcessEnv,
  readyLine: string,
): Promise<{ stop(): Promise<void> }> {
  const child = spawn(process.execPath, benchProcessArgs(file), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr.on('data', (d: Buffer) => stderr.push(d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bench/${file} exited (${code}) before ready:\n${stderr.join('')}`)));
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (line === readyLine) resolve();
    });
  });
  return {
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
