/**
 * @module `npm start` refuses, in one line and before starting anything, when the dev server's port is taken: the
 * line names the port and `TEMPORAL_ADDRESS`, the way to use the server already running there.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../testing/stack';

/** Holds 127.0.0.1:port while the test runs, unless something else already does (the refusal is the same). */
async function holdPort(port: number): Promise<() => Promise<void>> {
  const server = net.createServer();
  const held = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => resolve(true));
  });
  return () => (held ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve());
}

test('npm start with port 7233 taken says so in one line, names TEMPORAL_ADDRESS, and starts nothing', async () => {
  const release = await holdPort(7233);
  const dataDir = mkdtempSync(join(tmpdir(), 'tw-start-refused-'));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, TREEWARDEN_DATA_DIR: dataDir };
    delete env.TEMPORAL_ADDRESS;
    delete env.DATABASE_URL;
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: REPO_ROOT, env });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('port 7233');
    expect(lines[0]).toContain('TEMPORAL_ADDRESS=127.0.0.1:7233');
    expect(lines[0]).not.toMatch(/\n\s+at /);
    // refused before anything started: no PostgreSQL cluster, no dev server database in the data folder
    expect(readdirSync(dataDir)).toEqual([]);
  } finally {
    await release();
  }
});
