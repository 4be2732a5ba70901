/** A run written straight into the database, with the claimed wake it came from: the state before its workflow ran. */
import type { Db } from '../../db/prisma';
import type { RunStatus } from '../../domain/statuses';

export async function createRunRow(
  db: Db,
  row: { companyId: string; agentId: string; issueId: string; status?: RunStatus },
) {
  const { companyId, agentId, issueId } = row;
  const wake = await db.wakeRequest.create({
    data: { companyId, agentId, issueId, reason: 'manual_wake', status: 'claimed' },
  });
  return db.run.create({
    data: { companyId, agentId, issueId, wakeReason: 'manual_wake', wakeRequestId: wake.id, status: row.status },
  });
}
