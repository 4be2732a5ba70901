/**
 * @module Replay-safe changes: every recorded history (test/histories/, `npm run record:histories`)
 * replays against the current workflow code, and the check does catch an unpatched reordering. The
 * bundle every workflow sandbox loads holds the Temporal SDK and our code only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode, Worker, type ReplayResult } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { workflowBundle } from '../testing/harness';
import { QUIET_BUNDLER_LOG } from '../testing/stack';
import { UNTRACED } from '../runtime/tracing';
import { workflowSpanSinks } from '../workers/tracing';

const HISTORIES_DIR = join(__dirname, 'histories');

function recordedHistories() {
  return readdirSync(HISTORIES_DIR)
    .filter((file) => file.endsWith('.json'))
    .map((file) => {
      const history = JSON.parse(readFileSync(join(HISTORIES_DIR, file), 'utf8'));
      const type: string = history.events[0].workflowExecutionStartedEventAttributes.workflowType.name;
      return { workflowId: file.replace(/\.json$/, ''), type, history };
    });
}

async function replay(
  bundle: Awaited<ReturnType<typeof workflowBundle>>,
  histories: ReturnType<typeof recordedHistories>,
): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  const options = { workflowBundle: bundle, sinks: workflowSpanSinks(UNTRACED) };
  for await (const result of Worker.runReplayHistories(options, histories)) results.push(result);
  return results;
}

const histories = recordedHistories();

/** `pkg` and every package it depends on, as installed (npm installs them flat). */
function withDependencies(pkg: string, seen = new Set<string>()): Set<string> {
  if (seen.has(pkg)) return seen;
  seen.add(pkg);
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'node_modules', pkg, 'package.json'), 'utf8'));
  for (const dependency of Object.keys(manifest.dependencies ?? {})) withDependencies(dependency, seen);
  return seen;
}

test('the workflow bundle holds the SDK and our code only: no library reaches the sandbox through a domain import or the tracing interceptors', async () => {
  const { code } = await workflowBundle();
  const bundled = new Set([...code.matchAll(/node_modules\/((?:@[\w.-]+\/)?[\w.-]+)\//g)].map((match) => match[1]));
  // every workflow evaluates what the bundle imports: the OpenTelemetry SDK cost each one ~1.9 MiB (workflows/tracing)
  const sdk = withDependencies('@temporalio/workflow');
  expect([...bundled].filter((pkg) => !sdk.has(pkg))).toEqual([]);
  expect([...bundled].filter((pkg) => pkg.startsWith('@opentelemetry/'))).toEqual([]);
});

test('the recordings cover every workflow type the worker serves', async () => {
  const served = Object.keys(await import('../workflows'));
  expect(new Set(histories.map((h) => h.type))).toEqual(new Set(served));
});

test('every recorded history replays against the current workflow code', async () => {
  const results = await replay(await workflowBundle(), histories);
  expect(results.map((r) => [r.workflowId, r.error?.message ?? 'ok'])).toEqual(
    histories.map((h) => [h.workflowId, 'ok']),
  );
});

test('an unpatched reordering of activity calls fails the replay with a determinism violation', async () => {
  const reordered = await bundleWorkflowCode({
    workflowsPath: require.resolve('./fixtures/reordered-workflows'),
    logger: QUIET_BUNDLER_LOG,
  });
  const runs = histories.filter((h) => h.type === 'agentRunWorkflow');
  const results = await replay(reordered, runs);
  expect(results).toHaveLength(runs.length);
  for (const result of results) {
    expect(result.error).toBeInstanceOf(DeterminismViolationError);
    expect(result.error?.message).toMatch(
      /Activity type of scheduled event '(beginRun|claimRunWithinCompanyCap)' does not match activity type of activity command 'executeRun'/,
    );
  }
});
