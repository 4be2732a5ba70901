/** jest globalTeardown: drop this run's databases (template + tracked clones) and stop the dev server. */
import { log, teardownStack } from './reap';
import { unpublishStack } from './stack';

export default async function globalTeardown(): Promise<void> {
  const state = globalThis.__TREEWARDEN_TEST_STACK__;
  globalThis.__TREEWARDEN_TEST_STACK__ = undefined;
  unpublishStack();
  if (!state) return;
  const t0 = Date.now();
  await teardownStack(state, log);
  log(`test stack torn down (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}
