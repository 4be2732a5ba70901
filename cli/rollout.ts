/**
 * `treewarden rollout …`: what an operator runs to follow "Versioned rollouts" (docs/fleet.md): which build is
 * current, which workers poll as each build, which executions still need an old one, and the switch itself.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { InvalidArgumentError, type Command } from 'commander';
import { connectClient, loadTemporalTarget } from '../temporal/connection';
import { pinnedRunning, promote, rolloutStatus, type RolloutStatus } from '../temporal/rollout';
import { UsageError } from './errors';
import { print, type JsonOption } from './output';

interface RolloutOptions extends JsonOption {
  deployment: string;
}

async function withClient<T>(use: (client: Client) => Promise<T>): Promise<T> {
  const temporal = loadTemporalTarget(process.env);
  const connection = await connectClient(temporal, { connectTimeout: 10_000 });
  try {
    return await use(new Client({ connection, namespace: temporal.namespace }));
  } finally {
    await connection.close();
  }
}

function percentage(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 100) throw new InvalidArgumentError('must be a percentage, 0 to 100');
  return n;
}

function humanStatus(status: RolloutStatus): string {
  const lines = [`deployment ${status.deploymentName}: current ${status.currentBuildId ?? 'none'}`];
  for (const build of status.builds) {
    const ramp = build.rampPercentage !== undefined ? ` (${build.rampPercentage}% of new executions)` : '';
    const workers = new Set(build.workers.map((w) => w.identity)).size;
    const pinned = `${build.pinnedRunning} pinned execution(s) running`;
    lines.push(`  ${build.buildId}: ${build.status}${ramp}, ${workers} worker(s), ${pinned}`);
  }
  return lines.join('\n');
}

export function addRolloutCommands(program: Command): void {
  const rollout = program.command('rollout').summary('Worker Deployment Versioning: builds, workers, the switch');
  const command = (nameAndArgs: string, summary: string) =>
    rollout
      .command(nameAndArgs)
      .summary(summary)
      .option('--json', 'machine-readable output on stdout')
      .option(
        '--deployment <name>',
        'worker deployment (TREEWARDEN_DEPLOYMENT_NAME)',
        process.env.TREEWARDEN_DEPLOYMENT_NAME || 'treewarden',
      );

  command('status', 'per build: its routing status, its workers and the executions still pinned to it').action(
    async (opts: RolloutOptions) => {
      const status = await withClient((client) => rolloutStatus(client, opts.deployment));
      print(opts, status, () => humanStatus(status));
    },
  );

  command('promote <buildId>', 'make a build current (new executions start on it), or ramp it with --ramp')
    .option('--ramp <percent>', 'send only this share of new executions to it', percentage)
    .action(async (buildId: string, opts: RolloutOptions & { ramp?: number }) => {
      await withClient((client) => promote(client, { deploymentName: opts.deployment, buildId }, opts.ramp));
      const what = opts.ramp === undefined ? 'current' : `ramping at ${opts.ramp}%`;
      print(opts, { deploymentName: opts.deployment, buildId, routing: what }, () => `${buildId}: ${what}`);
    });

  command(
    'check-replay',
    "replay the running watchdogs and holds (the executions a new build takes over) against the new build's bundle",
  )
    .option(
      '--bundle <file>',
      "the new build's workflow bundle (npm run build:workflows)",
      process.env.TREEWARDEN_WORKFLOW_BUNDLE || join(process.env.TREEWARDEN_DATA_DIR || '.data', 'workflow-bundle.js'),
    )
    .option('--limit <n>', 'replay at most this many executions', (v) => Number(v), 1000)
    .action(async (opts: RolloutOptions & { bundle: string; limit: number }) => {
      if (!Number.isInteger(opts.limit) || opts.limit <= 0) throw new UsageError('--limit must be a positive integer');
      const code = readFileSync(opts.bundle, 'utf8');
      // the SDK's native replayer, loaded only by this command
      const { replayMovingExecutions } = await import('../workers/replay-check');
      const check = await withClient((client) =>
        replayMovingExecutions(client, code, { deploymentName: opts.deployment, limit: opts.limit }),
      );
      if (check.failures.length > 0) {
        const failed = check.failures.map((f) => `  ${f.workflowId}: ${f.error}`).join('\n');
        throw new IncompatibleBuildError(
          `${check.failures.length} of ${check.replayed} running execution(s) do not replay on ${opts.bundle}; ` +
            `patch the change (CONTRIBUTING) before this build is promoted:\n${failed}`,
        );
      }
      print(opts, check, () => `${check.replayed} running execution(s) replay on ${opts.bundle}`);
    });

  command('wait-drained <buildId>', 'wait until no running execution is pinned to a build (then stop its workers)')
    .option('--timeout <ms>', 'give up after this long (exit 1)', (v) => Number(v), 24 * 60 * 60_000)
    .action(async (buildId: string, opts: RolloutOptions & { timeout: number }) => {
      if (!Number.isInteger(opts.timeout) || opts.timeout <= 0) throw new UsageError('--timeout must be milliseconds');
      const version = { deploymentName: opts.deployment, buildId };
      const deadline = Date.now() + opts.timeout;
      const left = await withClient(async (client) => {
        for (;;) {
          const pinned = await pinnedRunning(client, version);
          if (pinned === 0 || Date.now() > deadline) return pinned;
          await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
        }
      });
      if (left > 0) throw new Error(`${buildId}: ${left} pinned execution(s) still running after ${opts.timeout} ms`);
      print(opts, { deploymentName: opts.deployment, buildId, pinnedRunning: 0 }, () => `${buildId}: drained`);
    });
}

/** A new build's workflow code cannot take over the running executions: exit 1, naming each. */
export class IncompatibleBuildError extends Error {
  override readonly name = 'IncompatibleBuildError';
}

// visibility is eventually consistent and a drain takes as long as the old build's longest run: no need to hurry
const DRAIN_POLL_MS = 2_000;
