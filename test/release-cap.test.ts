/**
 * @module The per-company cap on release fan-outs (issue 30, item 3): a company at
 * TREEWARDEN_COMPANY_MAX_RELEASE_FAN_OUTS has its next release wait (the hold's row, the API and its workflow say it
 * waits for the company's cap) and fan out once the company's fan-out in flight finishes, while another company's
 * release fans out at once. The first fan-out stays in flight because the test holds its company's row: every
 * resume it claims writes rows that reference the company, and waits for that lock.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startInterruptedHold } from '../bench/release-fanout';
import { workflowId } from '../domain/ids';
import { StateKey } from '../domain/search-attributes';
import { holdStateQuery } from '../workflows/definitions';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';

const MEMBERS = 3;

let h: Harness;
let pool: pg.Pool;
beforeAll(async () => {
  h = await startHarness({ TREEWARDEN_COMPANY_MAX_RELEASE_FAN_OUTS: '1' });
  pool = new pg.Pool({ connectionString: h.services.config.DATABASE_URL, max: 3 });
});
afterAll(async () => {
  await pool?.end();
  await h?.close();
});

/** A hold of the company over interrupted runs, its pause applied, awaiting its release. */
async function pausedHold(company: Awaited<ReturnType<typeof seedCompany>>) {
  const agent = await company.agent();
  const hold = await startInterruptedHold(h, pool, company.companyId, agent.id, MEMBERS);
  const handle = h.services.client.workflow.getHandle(workflowId.treeHold(hold.holdId));
  await eventually('the pause applied', async () => (await handle.query(holdStateQuery)).applied !== null);
  const release = () =>
    h.services.orchestrator.releaseHold({
      holdId: hold.holdId,
      releaseId: randomUUID(),
      wakeAgents: false,
      actor: { kind: 'system', companyId: company.companyId },
    });
  return { holdId: hold.holdId, handle, release };
}

const holdRow = (holdId: string) => h.services.db.treeHold.findUniqueOrThrow({ where: { id: holdId } });

test("a company at its cap on release fan-outs has its next release wait; another company's release fans out", async () => {
  const a = await seedCompany(h, 'Releasing twice');
  const b = await seedCompany(h, 'Releasing once');
  const [first, second, other] = [await pausedHold(a), await pausedHold(a), await pausedHold(b)];

  const companyLock = await pool.connect();
  let firstRelease: ReturnType<typeof first.release> | undefined;
  let secondRelease: ReturnType<typeof second.release> | undefined;
  try {
    await companyLock.query('BEGIN');
    await companyLock.query('SELECT 1 FROM "Company" WHERE id = $1 FOR UPDATE', [a.companyId]);
    firstRelease = first.release();
    await eventually('the first release fanning out', async () => (await holdRow(first.holdId)).fanningOutSince);

    secondRelease = second.release();
    const waiting = await eventually('the second release waiting for its company cap', async () => {
      const row = await holdRow(second.holdId);
      return row.waitingForCompanyCapSince ? row : null;
    });
    expect(waiting).toMatchObject({ status: 'active', fanningOutSince: null });
    const shown = await h.request('GET', `/api/tree-holds/${second.holdId}`, a.token);
    expect(shown.body).toMatchObject({ status: 'active', waitingForCompanyCapSince: expect.any(String) });
    await eventually(
      "the second hold's workflow waiting for its company cap",
      async () => (await second.handle.describe()).typedSearchAttributes.get(StateKey) === 'waiting_company_cap',
    );

    // the other company's release fans out and finishes while company A's first fan-out is still in flight
    const otherReport = await other.release();
    expect(otherReport.resumed).toHaveLength(MEMBERS);
    expect(await holdRow(second.holdId)).toMatchObject({ status: 'active', fanningOutSince: null });
    expect((await holdRow(first.holdId)).fanningOutSince).not.toBeNull();
  } finally {
    await companyLock.query('COMMIT');
    companyLock.release();
  }

  expect((await firstRelease!).resumed).toHaveLength(MEMBERS);
  expect((await secondRelease!).resumed).toHaveLength(MEMBERS);
  for (const holdId of [first.holdId, second.holdId, other.holdId]) {
    expect(await holdRow(holdId)).toMatchObject({
      status: 'released',
      fanningOutSince: null,
      waitingForCompanyCapSince: null,
    });
  }
  await eventually(
    "the second hold's workflow released",
    async () => (await second.handle.describe()).typedSearchAttributes.get(StateKey) === 'released',
  );
  // the first release's audit entry survived its attempts that waited for the lock
  const released = await h.services.db.activityLog.count({
    where: { action: 'issue.tree_hold_released', details: { path: ['holdId'], equals: first.holdId } },
  });
  expect(released).toBe(1);
});
