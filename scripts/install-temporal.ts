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
  process.stdout.write(`${bin}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`[install-temporal] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
