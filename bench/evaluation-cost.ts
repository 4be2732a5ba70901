/**
 * Scenario 1: one evaluation of a 10,000-issue subtree against the floor any evaluation has to pay,
 * a bare recursive walk of the same rows plus hashing them. Measured in interleaved pairs on the
 * same data and the same Prisma client, so the ratio holds even on a noisy machine.
 *
 * Measured twice. First the `Issue` table holds only the subtree: there the bare walk hash-joins a
 * sequential scan of the whole table at each level, a plan that is cheap only because the table is the
 * subtree. Then other companies' trees are added, as in any shared database: the bare walk probes
 * `Issue(parentId)` per node, as the evaluation always does, and the ratio is what an evaluation adds to
 * a walk. The target applies to that one.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { stopFingerprint } from '../domain/watchdog';
import { evaluateWatchdog } from '../watchdogs/evaluation';
import { seedCompany, type Harness } from '../testing/harness';
import { ms, row, statementCount, type ResultRow } from './support';
import { insertIssues, treeOf } from './worlds';

const SIZE = 10_000;
const FANOUT = 10;
const WARMUP = 3;
const PAIRS = 15;
/** other companies' trees of the same size beside the subtree, in the second measurement */
const NEIGHBOURS = 9;
const LEAF_STATUSES = ['done', 'blocked', 'in_review', 'cancelled'];

export async function evaluationCost(h: Harness, pool: pg.Pool): Promise<ResultRow[]> {
  const company = await seedCompany(h, 'Scenario 1');
  const companyId = company.companyId;
  const agentId = (await company.agent()).id;
  const tree = treeOf(SIZE, FANOUT);
  const isLeaf = new Set(tree.leaves);
  tree.issues.forEach((issue, i) => {
    if (isLeaf.has(issue.id)) issue.status = LEAF_STATUSES[i % LEAF_STATUSES.length];
  });
  await insertIssues(pool, companyId, tree.issues);
  await pool.query('ANALYZE "Issue"');
  // Reviewed already: the steady state of a watched tree at rest. The fingerprint is computed the
  // way the evaluation computes it, so a mismatch (and a wake) would show up as a failed check below.
  const leaves = tree.issues
    .filter((i) => isLeaf.has(i.id))
    .map((i) => ({
      id: i.id,
      status: i.status,
      assigneeAgentId: null,
      blockerIds: [],
      pendingInteractionIds: [],
      executionBlockerIds: [],
    }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)); // the order classifySubtree fingerprints in
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO "Watchdog" (id, "companyId", "issueId", "activeIssueId", "agentId", "lastReviewedFingerprint",
       "updatedAt")
     VALUES (gen_random_uuid(), $1, $2, $2, $3, $4, now()) RETURNING id`,
    [companyId, tree.rootId, agentId, stopFingerprint(leaves, { agentId, instructions: null })],
  );
  const watchdogId = rows[0].id;

  const evaluate = async () => {
    const summary = await evaluateWatchdog(h.services, watchdogId);
    if (summary.state !== 'already_reviewed' || summary.includedCount !== SIZE) {
      throw new Error(
        `scenario 1: expected an already-reviewed ${SIZE}-issue subtree, ` +
          `got ${summary.state} over ${summary.includedCount}`,
      );
    }
  };
  const bare = async () => {
    const walked = await h.services.db.$queryRaw<unknown[]>`
      WITH RECURSIVE t AS (
        SELECT id, "parentId", status, "assigneeAgentId" FROM "Issue" WHERE id = ${tree.rootId}::uuid
        UNION ALL
        SELECT i.id, i."parentId", i.status, i."assigneeAgentId" FROM "Issue" i JOIN t ON i."parentId" = t.id
      )
      SELECT id::text, "parentId"::text, status::text, "assigneeAgentId"::text FROM t`;
    createHash('sha256').update(JSON.stringify(walked)).digest('hex');
  };

  const alone = await pairs(evaluate, bare);
  for (let n = 1; n <= NEIGHBOURS; n++) {
    const neighbour = await seedCompany(h, `Scenario 1 neighbour ${n}`);
    await insertIssues(pool, neighbour.companyId, treeOf(SIZE, FANOUT).issues);
  }
  await pool.query('ANALYZE "Issue"');
  const shared = await pairs(evaluate, bare);
  const s = '1 evaluation, 10k subtree';
  const among = `${s} among ${((NEIGHBOURS + 1) * SIZE) / 1000}k issues`;
  return [
    row(s, 'evaluateWatchdog (Issue table = the subtree)', 'ms', alone.evalMs),
    row(s, 'bare CTE + sha256 (Issue table = the subtree)', 'ms', alone.bareMs),
    row(s, 'evaluation ÷ bare (paired; Issue table = the subtree)', '×', alone.ratios),
    row(s, 'statements per evaluation', 'stmts', alone.statements),
    row(among, 'evaluateWatchdog', 'ms', shared.evalMs),
    row(among, 'bare CTE + sha256', 'ms', shared.bareMs),
    row(among, 'evaluation ÷ bare (paired)', '×', shared.ratios, { text: '≤ 2×', ok: (m) => m <= 2 }),
  ];
}

/** `evaluate` against `bare` in interleaved pairs, after a warm-up. */
async function pairs(evaluate: () => Promise<void>, bare: () => Promise<void>) {
  for (let i = 0; i < WARMUP; i++) {
    await evaluate();
    await bare();
  }
  const evalMs: number[] = [];
  const bareMs: number[] = [];
  const ratios: number[] = [];
  const statements: number[] = [];
  for (let i = 0; i < PAIRS; i++) {
    // alternate the order so neither side always runs on the warmer cache
    const order = i % 2 === 0 ? (['eval', 'bare'] as const) : (['bare', 'eval'] as const);
    const took: Record<'eval' | 'bare', number> = { eval: 0, bare: 0 };
    for (const side of order) {
      const before = statementCount();
      const start = process.hrtime.bigint();
      await (side === 'eval' ? evaluate() : bare());
      took[side] = ms(start);
      if (side === 'eval') statements.push(statementCount() - before);
    }
    evalMs.push(took.eval);
    bareMs.push(took.bare);
    ratios.push(took.eval / took.bare);
  }
  return { evalMs, bareMs, ratios, statements };
}
