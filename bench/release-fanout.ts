/**
 * Scenario 5: releasing a hold of 1,000 members whose 1,000 runs the pause interrupted. The time
 * until the release reports all 1,000 re-dispatched (claim, wake, run, workflow start, each checked
 * at most once) is compared with the floor: 1,000 bare INSERTs writing the same rows (wake, run,
 * resume claim) into an identical twin hold plus 1,000 bare workflow starts, measured in the same
 * repeat. Afterwards exactly-once is checked: one claim and one resumed run per interrupted run, and
 * neither a second release nor a replayed settlement adds any.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import type pg from 'pg';
import { emptyReport, isHoldNotActive } from '../domain/hold-contract';
import { workflowId } from '../domain/ids';
import { releaseHold } from '../holds/release';
import { FAN_OUT_CONCURRENCY } from '../domain/concurrency';
import { resumeIfOwed } from '../dispatch/resume';
import type { Harness } from '../testing/harness';
import { inParallel, ms, row, type ResultRow } from './support';
import { insertIssues, treeOf } from './worlds';

const MEMBERS = 1000;
const REPEATS = 2;

interface SeededHold {
  holdId: string;
  rootId: string;
  memberIds: string[];
  interruptedRunIds: string[];
}

/**
 * The state a pause leaves behind: an applied hold, its snapshot, and a settled hold-stopped run per member (also
 * test/fairness.test.ts's company A).
 */
export async function seedInterruptedHold(
  pool: pg.Pool,
  companyId: string,
  agentId: string,
  members = MEMBERS,
): Promise<SeededHold> {
  const tree = treeOf(members, 10, 'in_progress');
  for (const issue of tree.issues) issue.assigneeAgentId = agentId;
  await insertIssues(pool, companyId, tree.issues);
  const holdId = randomUUID();
  const ids = tree.issues.map((i) => i.id);
  const wakeIds = ids.map(() => randomUUID());
  const runIds = ids.map(() => randomUUID());
  await pool.query(`INSERT INTO "TreeHold" (id, "companyId", "rootIssueId", "appliedAt") VALUES ($1, $2, $3, now())`, [
    holdId,
    companyId,
    tree.rootId,
  ]);
  await pool.query(
    `INSERT INTO "WakeRequest" (id, "companyId", "agentId", "issueId", reason, status, "runId", "claimedAt")
     SELECT u.wake, $1, $2, u.issue, 'bench_seed', 'claimed', u.run, now()
     FROM unnest($3::uuid[], $4::uuid[], $5::uuid[]) AS u(wake, issue, run)`,
    [companyId, agentId, wakeIds, ids, runIds],
  );
  await pool.query(
    `INSERT INTO "Run" (id, "companyId", "issueId", "agentId", "wakeRequestId", status, "wakeReason", "stopKind",
       "stoppedByHoldId", "stopRequestedAt", "finishedAt", "updatedAt")
     SELECT u.run, $1, u.issue, $2, u.wake, 'cancelled', 'bench_seed', 'operator_hold', $3, now(), now(), now()
     FROM unnest($4::uuid[], $5::uuid[], $6::uuid[]) AS u(run, issue, wake)`,
    [companyId, agentId, holdId, runIds, ids, wakeIds],
  );
  const depth = new Map<string, number>([[tree.rootId, 0]]);
  for (const issue of tree.issues) if (issue.parentId) depth.set(issue.id, depth.get(issue.parentId)! + 1);
  await pool.query(
    `INSERT INTO "TreeHoldMember" (id, "holdId", "issueId", depth, "issueStatus", "assigneeAgentId", "activeRunId",
       "activeRunStatus", "interruptedRunId")
     SELECT gen_random_uuid(), $1, u.issue, u.depth, 'in_progress', $2, u.run, 'running', u.run
     FROM unnest($3::uuid[], $4::int[], $5::uuid[]) AS u(issue, depth, run)`,
    [holdId, agentId, ids, ids.map((id) => depth.get(id)!), runIds],
  );
  return { holdId, rootId: tree.rootId, memberIds: ids, interruptedRunIds: runIds };
}

/** {@link seedInterruptedHold}, its workflow started and awaiting its release (scenario 9, the fairness test). */
export async function startInterruptedHold(
  h: Harness,
  pool: pg.Pool,
  companyId: string,
  agentId: string,
  members: number,
): Promise<SeededHold> {
  const hold = await seedInterruptedHold(pool, companyId, agentId, members);
  await pool.query('ANALYZE');
  await h.services.orchestrator.startHold({
    holdId: hold.holdId,
    companyId,
    rootIssueId: hold.rootId,
    title: 'release',
  });
  return hold;
}

/**
 * The floor: per interrupted run, one bare INSERT writing the wake, the run and the claim a resume writes, and one
 * bare workflow start on the same server (a type no worker polls, started as wide as the release fans out; they
 * are terminated outside the timing).
 */
async function floor(h: Harness, companyId: string, agentId: string, hold: SeededHold): Promise<void> {
  await bareInserts(h, companyId, agentId, hold);
  const taskQueue = `bench-floor-${randomUUID()}`;
  await inParallel(hold.interruptedRunIds, FAN_OUT_CONCURRENCY, (runId) =>
    h.services.client.workflow.start('benchBareStart', { taskQueue, workflowId: `bench-floor:${runId}` }),
  );
}

async function terminateFloorStarts(h: Harness, hold: SeededHold): Promise<void> {
  await inParallel(hold.interruptedRunIds, 16, (runId) =>
    h.services.client.workflow.getHandle(`bench-floor:${runId}`).terminate('bench floor'),
  );
}

async function bareInserts(h: Harness, companyId: string, agentId: string, hold: SeededHold): Promise<void> {
  for (let i = 0; i < MEMBERS; i++) {
    await h.services.db.$executeRaw`
      WITH w AS (
        INSERT INTO "WakeRequest" (id, "companyId", "agentId", "issueId", reason, context, status, "runId", "claimedAt")
        VALUES (gen_random_uuid(), ${companyId}::uuid, ${agentId}::uuid, ${hold.memberIds[i]}::uuid,
          'issue_tree_resumed', '{}', 'claimed', NULL, now())
        RETURNING id
      ), r AS (
        INSERT INTO "Run" (id, "companyId", "issueId", "agentId", "wakeRequestId", "wakeReason", "updatedAt")
        SELECT gen_random_uuid(), ${companyId}::uuid, ${hold.memberIds[i]}::uuid, ${agentId}::uuid, w.id,
          'issue_tree_resumed', now()
        FROM w
      )
      INSERT INTO "ResumeClaim" ("interruptedRunId", "holdId", "wakeRequestId")
      SELECT ${hold.interruptedRunIds[i]}::uuid, ${hold.holdId}::uuid, w.id FROM w`;
  }
}

export async function releaseFanout(
  h: Harness,
  pool: pg.Pool,
  companyId: string,
  agentId: string,
): Promise<ResultRow[]> {
  const releaseMs: number[] = [];
  const bareMs: number[] = [];
  const ratios: number[] = [];
  const violations: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const twin = await seedInterruptedHold(pool, companyId, agentId);
    // the hold's workflow applies the pause (already applied: a no-op over settled runs) and awaits its release
    const hold = await startInterruptedHold(h, pool, companyId, agentId, MEMBERS);

    const sides = { release: 0, bare: 0 };
    let resumedRunIds: string[] = [];
    for (const side of r % 2 === 0 ? (['release', 'bare'] as const) : (['bare', 'release'] as const)) {
      const start = process.hrtime.bigint();
      if (side === 'bare') await floor(h, companyId, agentId, twin);
      else {
        const actor = { kind: 'system' as const, companyId };
        const release = { holdId: hold.holdId, releaseId: randomUUID(), wakeAgents: false, actor };
        const outcome = await h.services.orchestrator.releaseHold(release);
        if (outcome.resumed.length !== MEMBERS)
          throw new Error(`scenario 5: release resumed ${outcome.resumed.length} of ${MEMBERS}`);
        resumedRunIds = outcome.resumed.map((x) => x.runId);
      }
      sides[side] = ms(start);
    }
    await terminateFloorStarts(h, twin);
    releaseMs.push(sides.release);
    bareMs.push(sides.bare);
    ratios.push(sides.release / sides.bare);
    // The resumed noop runs would finish by themselves; ending their workflows keeps their ~3,000
    // activities out of the next repeat and within the bench's time budget. The claims are written.
    await inParallel(resumedRunIds, 16, (runId) =>
      h.services.client.workflow
        .getHandle(workflowId.agentRun(runId))
        .terminate('bench: resumed run not needed')
        .catch((error: unknown) => {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
        }),
    );
    violations.push(await exactlyOnceViolations(h, pool, hold, companyId));
  }
  const s = '5 release fan-out, 1k members';
  return [
    row(s, 'release until all resumed', 'ms', releaseMs),
    row(s, 'floor: 1,000 bare inserts of the same rows + 1,000 bare workflow starts', 'ms', bareMs),
    row(s, 'release ÷ floor (paired)', '×', ratios, { text: '≤ 5×', ok: (m) => m <= 5 }),
    row(
      s,
      'exactly-once violations',
      'count',
      violations,
      { text: '0', ok: () => violations.every((v) => v === 0) },
      'after a second release and a replay of every settlement',
    ),
  ];
}

/**
 * One claim and one resumed run per interrupted run, even after a second release and a replay of
 * every settlement: returns how far the counts are off (0 = exactly once).
 */
async function exactlyOnceViolations(h: Harness, pool: pg.Pool, hold: SeededHold, companyId: string): Promise<number> {
  let secondReleaseAccepted = 0;
  try {
    const actor = { kind: 'system' as const, companyId };
    await releaseHold(h.services, hold.holdId, { releaseId: randomUUID(), wakeAgents: false, actor });
    secondReleaseAccepted = 1;
  } catch (error) {
    if (!isHoldNotActive(error)) throw error;
  }
  await inParallel(hold.interruptedRunIds, 8, (runId) => resumeIfOwed(h.services, runId, emptyReport()));
  const { rows } = await pool.query<{ claims: string; distinct_runs: string; resumed: string; issues: string }>(
    `SELECT (SELECT count(*) FROM "ResumeClaim" WHERE "holdId" = $1) AS claims,
            (SELECT count(DISTINCT "interruptedRunId") FROM "ResumeClaim" WHERE "holdId" = $1) AS distinct_runs,
            (SELECT count(*) FROM "Run"
              WHERE "issueId" = ANY($2::uuid[]) AND "wakeReason" = 'issue_tree_resumed') AS resumed,
            (SELECT count(DISTINCT "issueId") FROM "Run"
              WHERE "issueId" = ANY($2::uuid[]) AND "wakeReason" = 'issue_tree_resumed') AS issues`,
    [hold.holdId, hold.memberIds],
  );
  const counts = Object.values(rows[0]).map(Number);
  return secondReleaseAccepted + counts.reduce((off, n) => off + Math.abs(n - MEMBERS), 0);
}
