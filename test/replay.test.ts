/**
 * @module Replay-safe changes: every recorded history (test/histories/, `npm run record:histories`)
 * replays against the current workflow code, and the check does catch an unpatched reordering.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode, Worker, type ReplayResult } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { workflowBundle } from '../testing/harness';

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
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, histories)) results.push(result);
  return results;
}

const histories = recordedHistories();

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
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error },
  });
  const runs = histories.filter((h) => h.type === 'agentRunWorkflow');
  const results = await replay(reordered, runs);
  expect(results).toHaveLength(runs.length);
  for (const result of results) {
    expect(result.error).toBeInstanceOf(DeterminismViolationError);
    expect(result.error?.message).toMatch(
      /Activity type of scheduled event 'beginRun' does not match activity type of activity command 'executeRun'/,
    );
  }
});
