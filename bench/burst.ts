/**
 * Scenario 4: 1,000 changes under one watched root offered within a second, repeated. The debounce
 * and signal batching must turn each burst into a handful of evaluations and about one history event
 * per change, and continue-as-new must keep every run of the watchdog under 4,096 events even though
 * five bursts add more than that in total.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { workflowId } from '../domain/ids';
import { eventually, type Harness } from '../testing/harness';
import { watchdogStateQuery } from '../workflows/definitions';
import { quiescence, row, runHistoryLengths, type ResultRow } from './support';
import { applyChange, insertIssues, paced } from './worlds';

const CHANGES = 1000;
const BURSTS = 5;
const HISTORY_LIMIT = 4096;
const BURST_STATUSES = ['blocked', 'in_review', 'backlog', 'todo', 'done'];

export async function burst(h: Harness, pool: pg.Pool, companyId: string, agentId: string): Promise<ResultRow[]> {
  const rootId = randomUUID();
  const leaves = Array.from({ length: CHANGES }, () => randomUUID());
  await insertIssues(pool, companyId, [
    { id: rootId, parentId: null, status: 'in_progress' },
    ...leaves.map((id) => ({ id, parentId: rootId, status: 'cancelled' })),
  ]);
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO "Watchdog" (id, "companyId", "issueId", "activeIssueId", "agentId", "updatedAt")
     VALUES (gen_random_uuid(), $1, $2, $2, $3, now()) RETURNING id`,
    [companyId, rootId, agentId],
  );
  const watchdogId = rows[0].id;
  await h.services.orchestrator.subtreeChanged(
    { watchdogId, companyId, issueId: rootId, title: 'burst root' },
    'bench_start',
  );
  const id = workflowId.taskWatchdog(rootId);
  const handle = h.services.client.workflow.getHandle(id);
  await eventually(
    'the burst watchdog to evaluate once',
    async () => (await handle.query(watchdogStateQuery)).evaluations > 0,
    600_000,
  );
  await quiescence();

  const evaluations: number[] = [];
  const eventsPerChange: number[] = [];
  const offeredMs: number[] = [];
  for (let b = 0; b < BURSTS; b++) {
    const evaluationsBefore = (await handle.query(watchdogStateQuery)).evaluations;
    const eventsBefore = sum(await runHistoryLengths(h.services.client, id));
    const startedAt = await paced(CHANGES, CHANGES, (i) =>
      applyChange(h, pool, leaves[i], { status: BURST_STATUSES[b] }),
    );
    offeredMs.push(startedAt[startedAt.length - 1] - startedAt[0]);
    await quiescence(3000);
    evaluations.push((await handle.query(watchdogStateQuery)).evaluations - evaluationsBefore);
    eventsPerChange.push((sum(await runHistoryLengths(h.services.client, id)) - eventsBefore) / CHANGES);
  }
  const runs = await runHistoryLengths(h.services.client, id);
  const longest = Math.max(...runs);
  const s = '4 burst, 1k changes in 1 s';
  return [
    row(s, 'evaluations per burst', 'evals', evaluations, { text: '≤ 5', ok: (m) => m <= 5 }),
    row(s, 'history events per change', 'events', eventsPerChange, { text: '≤ 1.2', ok: (m) => m <= 1.2 }),
    row(
      s,
      'longest run history',
      'events',
      runs,
      { text: `≤ ${HISTORY_LIMIT} (every run)`, ok: () => longest <= HISTORY_LIMIT },
      `${runs.length} runs after ${BURSTS} bursts; max ${longest}`,
    ),
    row(s, 'time to offer 1,000 changes', 'ms', offeredMs),
  ];
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
