/**
 * @module Unit: the one definition of a company's taken slots (dispatch/company-cap.ts `slotsTaken`) and the one
 * answer to "is the company at its cap?" (`companyAtCap`). A claim and an offer count the running runs; a run about
 * to start its workflow counts the runs on their way to a claim too, never itself. The claims, deferrals and offers
 * themselves, against PostgreSQL and Temporal, are test/company-cap.test.ts.
 */
import type { Tx } from '../../db/prisma';
import type { Deps } from '../../runtime/deps';
import { companyAtCap, slotsTaken } from '../../dispatch/company-cap';

const COMPANY = '00000000-0000-4000-8000-00000000000c';
const RUN = '00000000-0000-4000-8000-0000000000a1';

test('a claim and an offer count the running runs only', () => {
  expect(slotsTaken(COMPANY, { for: 'claim' })).toEqual({ companyId: COMPANY, status: 'running' });
  expect(slotsTaken(COMPANY, { for: 'offer' })).toEqual({ companyId: COMPANY, status: 'running' });
});

test('a start counts the running runs and the queued runs on their way to a claim, except itself', () => {
  expect(slotsTaken(COMPANY, { for: 'start', runId: RUN })).toEqual({
    companyId: COMPANY,
    OR: [
      { status: 'running' },
      { status: 'queued', stopRequestedAt: null, companyCapQueuedAt: null, id: { not: RUN } },
    ],
  });
});

test.each([
  [2, false],
  [3, true],
  [4, true],
])('with %i slots taken of 3 the company at its cap is %s', async (taken, atCap) => {
  const asked: unknown[] = [];
  const tx = {
    run: {
      count: (args: { where: unknown }) => {
        asked.push(args.where);
        return Promise.resolve(taken);
      },
    },
  } as unknown as Tx;
  const deps = { config: { TREEWARDEN_COMPANY_MAX_RUNNING_RUNS: 3 } } as unknown as Deps;
  await expect(companyAtCap(deps, tx, COMPANY, { for: 'claim' })).resolves.toEqual({ atCap, taken, cap: 3 });
  expect(asked).toEqual([slotsTaken(COMPANY, { for: 'claim' })]);
});
