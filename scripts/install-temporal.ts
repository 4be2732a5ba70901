/**
 * `tsx scripts/install-temporal.ts`: make sure the pinned Temporal CLI is in the user cache and print its path.
 * Progress goes to stderr, the path alone to stdout (so `TEMPORAL=$(npx tsx scripts/install-temporal.ts)` works).
 */
import { ensureTemporalCli, TEMPORAL_CLI_VERSION } from './provision/temporal-cli';

async function main(): Promise<void> {
  const started = Date.now();
  const bin = await ensureTemporalCli((line) => process.stderr.write(`[install-temporal] ${line}\n`));
  process.stderr.write(
    `[install-temporal] temporal CLI ${TEMPORAL_CLI_VERSION} ` +
      `ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
  // Exit now: a download that missed its deadline (temporal-cli-download.ts) may still hold the native client open.
  process.stdout.write(`${bin}\n`, () => process.exit(0));
}

main().catch((err: unknown) => {
  process.stderr.write(`[install-temporal] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
