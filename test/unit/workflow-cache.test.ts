import { defaultMaxCachedWorkflows } from '../../domain/workflow-cache';

/** a cached watchdog's memory with the OpenTelemetry workflow interceptors (bench/workflow-footprint.ts, 2026-12-05) */
const MEASURED_MIB_PER_CACHED_WORKFLOW = 2.07;

test.each([512, 2048, 4144, 8192])(
  'a full default cache fits in a %i MiB workflow heap at the measured footprint',
  (heap) => {
    const cached = defaultMaxCachedWorkflows(heap);
    expect(200 + cached * MEASURED_MIB_PER_CACHED_WORKFLOW).toBeLessThanOrEqual(heap);
    // and it is not needlessly small: the margin over the measured footprint is under a third
    expect(200 + cached * MEASURED_MIB_PER_CACHED_WORKFLOW * 1.33).toBeGreaterThan(heap);
  },
);

test("a tiny heap still caches the SDK's minimum of 10 workflows", () => {
  expect(defaultMaxCachedWorkflows(100)).toBe(10);
});
