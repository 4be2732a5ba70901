/**
 * `npm run build:workflows`: bundles workflows/ once, at deploy time, into the file every worker loads
 * (TREEWARDEN_WORKFLOW_BUNDLE, default `<TREEWARDEN_DATA_DIR>/workflow-bundle.js`). Workers then start in
 * milliseconds and all of them run byte-identical workflow code. Rebuild on every deploy: a worker
 * prefers a stale bundle to the current source.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { bundleWorkflows } from '../workers/workflow-code';

async function main() {
  const target = resolve(
    process.env.TREEWARDEN_WORKFLOW_BUNDLE ?? join(process.env.TREEWARDEN_DATA_DIR ?? '.data', 'workflow-bundle.js'),
  );
  const { code } = await bundleWorkflows();
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, code);
  process.stdout.write(`workflow bundle written to ${target} (${(code.length / 1024).toFixed(0)} KiB)\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bundling the workflows failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
