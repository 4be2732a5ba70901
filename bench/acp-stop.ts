/**
 * Scenario 10 (issue 46): what an `acp` run's stop and continuation cost against a `process` run's. Each round pauses
 * a run mid-turn and releases it:
 * - the stop, from the stop's request (`stopRequestedAt`) to its verified result (`stopResult.verifiedAt`): for `acp`
 *   its two layers (the supervisor cancels the turn through the protocol and ends its agent, then the cgroup is
 *   verified empty); for `process`, an agent that writes its checkpoint on SIGTERM;
 * - for `acp`, the release's answer to the resumed session's first update (the fixture's plan, in the new run's
 *   journal), the session loaded in between;
 * - the supervisor's cost per tool call: a tool call's `in_progress` to `completed` in the journal, one
 *   `fs/write_text_file` round trip through the supervisor and two updates.
 * The agent is the ACP fixture of the tests (test/fixtures/acp-agent.ts): the figures are treewarden's, not a model's.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ACP_FIXTURE, journalOf, type JournalLine } from '../testing/acp';
import { eventually, seedCompany, settled, type Harness } from '../testing/harness';
import { percentile, row, type ResultRow } from './support';

const ROUNDS = Number(process.env.BENCH_ACP_ROUNDS ?? 10);
/** checkpoints on SIGTERM, as a resumable `process` agent does (docs/tree-holds.md) */
const PROCESS_AGENT =
  '[ "$TREEWARDEN_WAKE_REASON" = issue_tree_resumed ] && exit 0; ' +
  `trap 'echo "{\\"resumable\\": true}" > "$TREEWARDEN_CHECKPOINT_FILE"; exit 0' TERM; ` +
  'echo up >> "$TREEWARDEN_JOURNAL_FILE"; sleep 600 & wait';

type Company = Awaited<ReturnType<typeof seedCompany>>;

async function pausedAndReleased(h: Harness, c: Company, kind: 'acp' | 'process', workspace: string | null) {
  const adapter =
    kind === 'acp'
      ? {
          type: 'acp',
          ...ACP_FIXTURE,
          env: { ACP_FIXTURE_MODE: 'block-clean', ACP_FIXTURE_THEN: 'work' },
          cwd: workspace,
        }
      : { type: 'process', command: 'sh', args: ['-c', PROCESS_AGENT] };
  const agent = await c.agent(adapter);
  const parent = await c.issue({ title: 'bench parent' });
  const child = await c.issue({ title: 'bench child', parentId: parent.id, assigneeAgentId: agent.id, status: 'todo' });
  const runId = (await h.request('POST', `/api/issues/${child.id}/wake`, c.token, {})).body.runId as string;
  await eventually('the agent mid-turn', async () =>
    kind === 'acp'
      ? journalOf(runId, workspace).some((l) => l.text === 'waiting for cancel')
      : journalOf(runId, null).length > 0,
  );
  const hold = (await h.request('POST', `/api/issues/${parent.id}/tree-holds`, c.token, { mode: 'pause' })).body;
  const stopped = await eventually('the stop verified', async () => {
    const run = await h.services.db.run.findUniqueOrThrow({ where: { id: runId } });
    return run.status === 'cancelled' ? run : null;
  });
  const result = stopped.stopResult as { verifiedAt: string; outcome?: string };
  if (result.outcome !== 'preserved') throw new Error(`${kind} stop not preserved: ${JSON.stringify(result)}`);
  const stopMs = Date.parse(result.verifiedAt) - stopped.stopRequestedAt!.getTime();
  const releasedAt = Date.now();
  const released = await h.request('POST', `/api/issues/${parent.id}/tree-holds/${hold.id}/release`, c.token, {});
  const resumedId = released.body.resumed[0].runId as string;
  let firstUpdateMs: number | null = null;
  if (kind === 'acp') {
    await eventually("the resumed session's first update", async () =>
      journalOf(resumedId, workspace).some((l) => l.kind === 'plan'),
    );
    firstUpdateMs = Date.now() - releasedAt;
  }
  const resumed = await settled(h, resumedId);
  if (resumed.status !== 'succeeded') throw new Error(`${kind} resumed run ${resumed.status}`);
  const toolCallMs = kind === 'acp' ? toolCallSpan(journalOf(resumedId, workspace)) : null;
  return { stopMs, firstUpdateMs, toolCallMs };
}

/** in_progress to completed of the fixture's write, from the journal's own timestamps */
function toolCallSpan(lines: JournalLine[]): number {
  const at = (status: string) => lines.find((l) => l.kind === 'tool_call_update' && l.status === status)?.at;
  const [from, to] = [at('in_progress'), at('completed')];
  if (!from || !to) throw new Error('the resumed turn journaled no tool call');
  return Date.parse(to) - Date.parse(from);
}

export async function acpStop(h: Harness): Promise<ResultRow[]> {
  const c = await seedCompany(h, 'ACP bench');
  const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), 'bench-acp-')));
  const acp: { stopMs: number; firstUpdateMs: number; toolCallMs: number }[] = [];
  const processStops: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const workspace = path.join(scratch, `ws-${round}`);
      mkdirSync(workspace);
      const a = await pausedAndReleased(h, c, 'acp', workspace);
      acp.push({ stopMs: a.stopMs, firstUpdateMs: a.firstUpdateMs!, toolCallMs: a.toolCallMs! });
      processStops.push((await pausedAndReleased(h, c, 'process', null)).stopMs);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const acpStops = acp.map((r) => r.stopMs);
  const p95 = (values: number[]) => `p95 ${percentile(values, 95)} ms`;
  return [
    row('10 acp stop', 'acp stop: requested to verified clean', 'ms', acpStops, undefined, p95(acpStops)),
    row('10 acp stop', 'process stop: requested to verified clean', 'ms', processStops, undefined, p95(processStops)),
    row(
      '10 acp stop',
      "release to the resumed session's first update",
      'ms',
      acp.map((r) => r.firstUpdateMs),
    ),
    row(
      '10 acp stop',
      'supervisor per tool call (fs write round trip)',
      'ms',
      acp.map((r) => r.toolCallMs),
    ),
  ];
}
