/**
 * `npx tsx bench/waking-path.ts [changes]`: where a waking change's statements and workflow tasks go (issue 45).
 * On a world of its own (the bench's stack, one in-process harness), a few idle watchdogs each get one waking change
 * (a leaf → blocked, recorded as bench/worlds.ts records it), one at a time, each until quiescence. Every statement
 * treewarden sends is attributed to the first frame of treewarden code on its (async) stack, and the watched
 * issue's watchdog history is tallied from the change on. Prints the statements per origin per change, and the
 * signals, workflow tasks and events; bench/change-classes.ts gives the same totals at scale.
 */
import path from 'node:path';
import pg from 'pg';
import { workflowId } from '../domain/ids';
import { eventually, seedCompany } from '../testing/harness';
import {
  benchHarness,
  closeStack,
  databaseUrlOf,
  installStatementCounter,
  log,
  provisionStack,
  quiescence,
  statementCount,
  statementSourceOf,
  tallyHistory,
  taggedPool,
} from './support';
import { applyChange, evaluatedSince, seedIdleWatchdogs, startWatchdogWorkflows } from './worlds';

const REPO_ROOT = path.resolve(__dirname, '..');
const CHANGES = Number(process.argv[2] ?? 3);

/** Origins of the statements since the last reset: `file:function` of the first treewarden frame, and the SQL. */
const traced: { origin: string; sql: string }[] = [];

function installTracer(): void {
  const counted = pg.Client.prototype.query;
  pg.Client.prototype.query = function tracedQuery(this: pg.Client, ...args: unknown[]) {
    const first = args[0];
    const sql = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '?');
    if (statementSourceOf(this) !== 'treewarden') return (counted as (...a: unknown[]) => unknown).apply(this, args);
    traced.push({ origin: originOf(new Error().stack ?? ''), sql: sql.replace(/\s+/g, ' ').slice(0, 90) });
    return (counted as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof counted;
}

function originOf(stack: string): string {
  const frames = stack
    .split('\n')
    .slice(1)
    .map((line) => /at (?:async )?(\S+) \((.+):\d+:\d+\)/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ fn: m[1], file: path.relative(REPO_ROOT, m[2]) }))
    .filter((f) => !f.file.startsWith('..') && !f.file.startsWith('node_modules') && !f.file.startsWith('bench/'));
  const mine = frames.filter((f) => !f.file.startsWith('db/prisma') && !f.file.startsWith('db/patient-pool'));
  return mine.length === 0 ? '(no treewarden frame)' : mine.map((f) => `${f.file}:${f.fn}`).join(' < ');
}

async function main(): Promise<void> {
  installStatementCounter();
  installTracer();
  const stack = await provisionStack();
  try {
    const h = await benchHarness({ TREEWARDEN_WATCHDOG_TICK_MS: '3600000' });
    const pool = taggedPool(databaseUrlOf(h), 'bench');
    try {
      const company = await seedCompany(h, 'Trace');
      const agent = await company.agent();
      const trees = await seedIdleWatchdogs(pool, company.companyId, agent.id, CHANGES);
      const since = new Date();
      await startWatchdogWorkflows(h, company.companyId, trees);
      const ids = trees.map((t) => t.watchdogId);
      await eventually('first evaluations', async () => (await evaluatedSince(pool, since, ids)) === ids.length);
      await quiescence();
      for (const t of trees) {
        traced.length = 0;
        const before = statementCount();
        const at = Date.now();
        await applyChange(h, pool, t.leafId, { status: 'blocked' });
        await eventually('the wake', async () => {
          const { rows } = await pool.query(`SELECT "lastTriggeredAt" FROM "Watchdog" WHERE id = $1`, [t.watchdogId]);
          return rows[0].lastTriggeredAt !== null && rows[0].lastTriggeredAt.getTime() >= at - 1000;
        });
        await quiescence();
        const [tally] = await tallyHistory(h.services.client, workflowId.taskWatchdog(t.rootId), [
          { from: at, to: Infinity },
        ]);
        const mine = traced;
        process.stdout.write(`\n=== change on ${t.leafId}: ${statementCount() - before} statements\n`);
        process.stdout.write(`${JSON.stringify(tally)}\n`);
        for (const s of mine) process.stdout.write(`  ${s.origin}\n      ${s.sql}\n`);
      }
    } finally {
      await pool.end();
      await h.close();
    }
  } finally {
    await closeStack(stack);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(String(error instanceof Error ? error.stack : error));
    process.exit(1);
  },
);
