/**
 * `treewarden`: the operator CLI. Processes (worker, api), Temporal workflow status, and the two
 * operator actions on the API (stop a run, release a tree hold).
 *
 * Every command takes `--json` (machine output on stdout; on failure `{ "error": ... }`, the
 * human message still goes to stderr). Exit codes: see EXIT (errors.ts).
 */
import { Client } from '@temporalio/client';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { createTreewardenClient, TreewardenApiError, type BlockerResolution } from '../client';
import { uuidSchema } from '../domain/ids';
import { connectClient, loadTemporalTarget } from '../temporal/connection';
import { EXIT, exitCodeFor, messageOf, UsageError } from './errors';
import { runScript } from './run-script';
import { formatTree } from './tree-format';
import { addRolloutCommands } from './rollout';
import { print, type JsonOption } from './output';
import { acpActivityLines } from './acp-activity';
import { candidateWorkflowIds, describeWorkflow, humanStatus, workflowStatus } from './workflow-status';

const EXIT_HELP = `
Exit codes:
  0  ok
  1  unexpected error (unreachable server, internal error, ...)
  2  usage error (bad arguments, missing TREEWARDEN_TOKEN, HTTP 400)
  3  not found (no such workflow, run, issue or hold)
  4  conflict (HTTP 409, e.g. the hold is not active any more)
  5  unauthorized or forbidden

Environment:
  TEMPORAL_ADDRESS     status: Temporal frontend (default 127.0.0.1:7233)
  TEMPORAL_NAMESPACE   status: namespace (default "default")
  TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_*, TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE
                       status: the rest of the connection, as the temporal CLI reads them (@temporalio/envconfig)
  TREEWARDEN_API_URL   stop, inspect, ack, reconcile, release, tree, pause: API base URL (default http://127.0.0.1:8787)
  TREEWARDEN_TOKEN     stop, inspect, ack, reconcile, release, tree, pause: a company board token`;

function uuid(value: string, name: string): string {
  if (!uuidSchema.safeParse(value).success) throw new UsageError(`${name} must be a UUID, got "${value}"`);
  return value;
}

function apiClient() {
  const token = process.env.TREEWARDEN_TOKEN;
  if (!token) throw new UsageError('TREEWARDEN_TOKEN is not set (a company board token)');
  return createTreewardenClient({ baseUrl: process.env.TREEWARDEN_API_URL || 'http://127.0.0.1:8787', token });
}

/** pids holding the run workspace's writer lock, as the `inspect` line shows them */
function writerLockHolders(holders: number[] | null): string {
  return holders === null ? 'unknown (host unreachable)' : holders.join(', ') || 'none';
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

function buildProgram(): Command {
  const program = new Command('treewarden')
    .description('treewarden operator CLI: run the processes, inspect workflows, stop runs, release tree holds')
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', EXIT_HELP);
  const command = (nameAndArgs: string, summary: string, description = summary) =>
    program
      .command(nameAndArgs)
      .summary(summary)
      .description(description)
      .option('--json', 'machine-readable output on stdout');

  for (const [name, script] of [
    ['worker', 'workers/main.ts'],
    ['api', 'api/main.ts'],
  ] as const) {
    command(
      name,
      `run the ${name} process (tsx ${script})`,
      `Run the ${name} process (tsx ${script}) with inherited stdio until SIGTERM/SIGINT, ` +
        'and exit with its exit code.\n' +
        "Its logs are NDJSON on stdout already; --json only formats the CLI's own errors.",
    ).action(async () => {
      process.exitCode = await runScript(script);
    });
  }

  command(
    'status <id>',
    'describe a watchdog, hold or run workflow in Temporal',
    'Describe a workflow by id: task-watchdog:<issueId>, tree-hold:<holdId>, agent-run:<runId>, ' +
      'or a bare run or hold UUID.\n' +
      'Running watchdogs and holds also report their `state` query (needs a running worker).',
  )
    .option('--connect-timeout <ms>', 'Temporal connect timeout in milliseconds', positiveInt, 10_000)
    .action(async (id: string, opts: JsonOption & { connectTimeout: number }) => {
      const ids = candidateWorkflowIds(id);
      const temporal = loadTemporalTarget(process.env);
      const connection = await connectClient(temporal, { connectTimeout: opts.connectTimeout });
      try {
        const client = new Client({ connection, namespace: temporal.namespace });
        const status = await workflowStatus(client, await describeWorkflow(client, ids));
        print(opts, status, () => humanStatus(status));
      } finally {
        await connection.close();
      }
    });

  command(
    'stop <id>',
    'stop an agent run, shell job or monitor by id and print the verified result (POST /api/work/:id/stop)',
  ).action(async (workId: string, opts: JsonOption) => {
    const result = await apiClient().stopWork(uuid(workId, 'id'));
    const survivors =
      'attempts' in result.stop
        ? result.stop.attempts.flatMap((a) => a.survivors.map((s) => `  ${a.signal} left pid ${s.pid}: ${s.command}`))
        : [];
    print(opts, result, () => [`${result.kind} ${result.id}: ${result.stop.verdict}`, ...survivors].join('\n'));
  });

  command(
    'inspect <id>',
    'show the ownership graph of an agent run, shell job or monitor (read-only; spawns nothing)',
  ).action(async (workId: string, opts: JsonOption) => {
    const view = await apiClient().inspectWork(uuid(workId, 'id'));
    print(opts, view, () =>
      [
        `${view.kind} ${view.id}: ${view.verdict} — ${view.action}`,
        ...(view.processTree.visible
          ? view.processTree.processes.map((p) => `  pid ${p.pid} (group ${p.pgid}, parent ${p.ppid}): ${p.command}`)
          : [`  processes: ${view.processTree.detail}`]),
        ...(view.jobs ?? []).map((j) => `  ${j.kind} ${j.id}: ${j.status}${j.verdict ? ` (${j.verdict})` : ''}`),
        ...(view.workspace
          ? [
              `  workspace ${view.workspace.path ?? '-'}; ` +
                `writer lock holders: ${writerLockHolders(view.workspace.writerLock.holders)}; ` +
                `tombstone: ${view.workspace.tombstone.matches ? 'matches' : 'none'}`,
            ]
          : []),
        ...(view.supersededBy ? [`  superseded by run ${view.supersededBy.run.id}`] : []),
        ...(view.run?.acpSessionId ? [`  ACP session ${view.run.acpSessionId} (${view.run.acpSessionOrigin})`] : []),
        ...acpActivityLines(view.run?.acpActivity),
      ].join('\n'),
    );
  });

  program
    .command('host')
    .summary("the worker fleet's hosts")
    .command('lost <hostId>')
    .summary(
      'declare a host gone for good: its pending stops settle as host-lost ' +
        '(POST /api/hosts/:hostId/lost; TREEWARDEN_TOKEN = the admin token)',
    )
    .option('--json', 'machine-readable output on stdout')
    .action(async (hostId: string, opts: JsonOption) => {
      const lost = await apiClient().declareHostLost(hostId);
      print(
        opts,
        lost,
        () =>
          `host ${lost.hostId}: lost since ${lost.declaredAt}; ` +
          `${lost.settledRuns} pending run stops and ${lost.settledJobs} job stops settled as host-lost`,
      );
    });

  command(
    'ack <runId>',
    'acknowledge a failed run that reconciliation could not close (POST /api/runs/:id/ack)',
  ).action(async (runId: string, opts: JsonOption) => {
    const result = await apiClient().acknowledgeRun(uuid(runId, 'runId'));
    print(opts, result, () => `run ${result.id}: ${result.status}, ${result.failureState}`);
  });

  command(
    'reconcile <blockerOrRunId>',
    'resolve the execution blocker of a run stopped mid-turn (by blocker or run id); ' +
      'the interrupted work then resumes once',
    'Resolve an execution blocker (POST /api/execution-blockers/:id/resolve). ' +
      '<blockerOrRunId> is the blocker id or the id of the run it names.\n' +
      'Resolving vouches for what the stopped run did; the interrupted task then resumes once ' +
      '(with the last release of any hold still covering it).',
  )
    .requiredOption('--resolution <resolution>', 'no_external_effects | effects_reviewed', (value: string) => {
      if (value !== 'no_external_effects' && value !== 'effects_reviewed')
        throw new InvalidArgumentError('must be no_external_effects or effects_reviewed');
      return value;
    })
    .option('--note <text>', 'what was reviewed')
    .action(async (id: string, opts: JsonOption & { resolution: BlockerResolution; note?: string }) => {
      const client = apiClient();
      const given = uuid(id, 'blockerOrRunId');
      const body = { resolution: opts.resolution, ...(opts.note ? { note: opts.note } : {}) };
      const resolved = await client.resolveExecutionBlocker(given, body).catch(async (error: unknown) => {
        if (!(error instanceof TreewardenApiError) || error.status !== 404) throw error;
        // not a blocker id: the run's blocker, if the id is a run of this company
        const run = await client.getRun(given).catch(() => null);
        if (!run?.executionBlocker) throw error;
        return client.resolveExecutionBlocker(run.executionBlocker.id, body);
      });
      print(
        opts,
        resolved,
        () =>
          `execution blocker ${resolved.id} (run ${resolved.runId ?? '-'}): ` +
          `${resolved.status} as ${resolved.resolution}`,
      );
    });

  command('release <issueId> <holdId>', 'release a tree hold rooted at <issueId>: its interrupted runs resume')
    .option('--wake-agents', 'also wake the other members in todo, in_progress or in_review')
    .action(async (issueId: string, holdId: string, opts: JsonOption & { wakeAgents?: boolean }) => {
      const ids = [uuid(issueId, 'issueId'), uuid(holdId, 'holdId')] as const;
      const result = await apiClient().releaseTreeHold(...ids, { wakeAgents: opts.wakeAgents ?? false });
      print(opts, result, () =>
        [
          `tree hold ${result.hold.id}: ${result.hold.status}`,
          ...result.resumed.map((r) => `  resumed  issue ${r.issueId} as run ${r.runId}`),
          ...result.skipped.map((s) => `  skipped  issue ${s.issueId}: ${s.reason}`),
          ...result.wakeFailures.map((f) => `  wake failed  issue ${f.issueId}: ${f.message}`),
        ].join('\n'),
      );
    });

  command(
    'tree <issueId>',
    'print the subtree with its badges: status, assignee, run, holds, watchdog and execution blockers ' +
      '(GET /api/issues/:id/tree)',
  )
    .option('--depth <levels>', 'levels below the issue', positiveInt, 10)
    .option(
      '--offset <n>',
      "skip the issue's first n children",
      (value: string) => (value === '0' ? 0 : positiveInt(value)),
      0,
    )
    .action(async (issueId: string, opts: JsonOption & { depth: number; offset: number }) => {
      const tree = await apiClient().getTree(uuid(issueId, 'issueId'), {
        depth: opts.depth,
        offset: opts.offset,
        limit: 500,
      });
      print(opts, tree, () => formatTree(tree));
    });

  command(
    'pause <issueId>',
    "pause the issue's subtree: a tree hold stops its live runs, and `release` resumes them " +
      '(POST /api/issues/:id/tree-holds)',
  )
    .option('--reason <text>', 'why, shown with the hold')
    .action(async (issueId: string, opts: JsonOption & { reason?: string }) => {
      const hold = await apiClient().pauseTree(uuid(issueId, 'issueId'), opts.reason ? { reason: opts.reason } : {});
      const interrupted = hold.members.filter((m) => m.interruptedRunId);
      print(opts, hold, () =>
        [
          `tree hold ${hold.id}: ${hold.status}, ` +
            `${hold.members.length} issues paused, ${interrupted.length} runs interrupted`,
          ...interrupted.map((m) => `  stopped  run ${m.interruptedRunId} of issue ${m.issueId}`),
          `release with: treewarden release ${hold.rootIssueId} ${hold.id}`,
        ].join('\n'),
      );
    });

  addRolloutCommands(program);
  return program;
}

async function run(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return Number(process.exitCode ?? EXIT.ok);
  } catch (error) {
    const exitCode = exitCodeFor(error);
    if (exitCode === EXIT.ok) return exitCode;
    // commander has printed its usage errors already
    if (!(error instanceof CommanderError)) process.stderr.write(`treewarden: ${messageOf(error)}\n`);
    if (argv.includes('--json')) {
      const api =
        error instanceof TreewardenApiError ? { status: error.status, code: error.code, details: error.details } : {};
      process.stdout.write(`${JSON.stringify({ error: { message: messageOf(error), exitCode, ...api } })}\n`);
    }
    return exitCode;
  }
}

if (require.main === module) {
  void run(process.argv).then((code) => {
    process.exitCode = code;
  });
}
