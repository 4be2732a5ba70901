/**
 * Headless Chromium for the Temporal Web UI test: Debian's `chromium` package, driven by playwright-core.
 * Installed on first use with apt-get (the test machines run as root); any other failure is loud, never a skip.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
export const CHROMIUM_PATH = '/usr/bin/chromium';

type Log = (line: string) => void;

/** Returns the path of an executable Chromium, running `apt-get install -y chromium` when it is missing. */
export async function ensureChromium(log: Log): Promise<string> {
  if (fs.existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  if (process.getuid?.() !== 0) {
    throw new Error(`${CHROMIUM_PATH} is missing and this process is not root: run \`sudo apt-get install -y chromium\``);
  }
  const t0 = Date.now();
  log('installing Debian chromium for the Temporal UI test (apt-get install -y chromium)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    // a fresh container has no package lists yet
    await execFileAsync('apt-get', ['update'], { env, maxBuffer: 64 << 20 });
    await execFileAsync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { env, maxBuffer: 64 << 20 });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`could not install chromium with apt-get: ${stderr?.trim().split('\n').slice(-5).join('\n') ?? String(error)}`);
  }
  if (!fs.existsSync(CHROMIUM_PATH)) throw new Error(`apt-get installed chromium but ${CHROMIUM_PATH} does not exist`);
  log(`chromium installed in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return CHROMIUM_PATH;
}
