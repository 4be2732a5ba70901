/**
 * A parent paused while `n` assigned tasks are in their prepare step: the hold interrupts each
 * run, and every stop has unwound (settled as cancelled) before this returns, so a release's
 * resumes all come from its own fan-out. The prepare step blocks only on the first run, so each
 * resumed run passes straight through.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { eventually, type Harness, type seedCompany } from '../../testing/harness';

export async function pausedFamily(h: Harness, c: Awaited<ReturnType<typeof seedCompany>>, n: number) {
  const parent = await c.issue({ title: 'paused' });
  const markers: string[] = [];
  const childIds: string[] = [];
  for (let i = 0; i < n; i++) {
    const marker = `/tmp/tw-paused-${randomBytes(6).toString('hex')}`;
    markers.push(marker);
    const agent = await c.agent({
      type: 'process',
      command: 'true',
      prepare: { command: 'sh', args: ['-c', `test -f ${marker} && exit 0; touch ${marker}; sleep 60 & wait`] },
    });
    const child = await c.issue({
      title: `task ${i}`,
      parentId: parent.id,
      assigneeAgentId: agent.id,
      status: 'in_progress',
    });
    childIds.push(child.id);
    expect((await h.request('POST', `/api/issues/${child.id}/wake`, c.token, {})).status).toBe(202);
  }
  await eventually('prepare steps running', async () => markers.every((m) => existsSync(m)), 60_000);
  const paused = await h.request('POST', `/api/issues/${parent.id}/tree-holds`, c.token, { mode: 'pause' });
  expect(paused.status).toBe(201);
  const interrupted: string[] = paused.body.members.flatMap((m: { interruptedRunId: string | null }) =>
    m.interruptedRunId ? [m.interruptedRunId] : [],
  );
  expect(interrupted).toHaveLength(n);
  await eventually(
    'stops verified',
    async () => (await h.services.db.run.count({ where: { id: { in: interrupted }, status: 'cancelled' } })) === n,
    60_000,
  );
  return { parent, holdId: paused.body.id as string, interrupted, childIds };
}

/** A release of a paused family answered 200 and resumed every interrupted task exactly once, one claim each. */
export async function expectResumedExactlyOnce(
  h: Harness,
  released: { status: number; body: any },
  family: { childIds: string[]; interrupted: string[] },
) {
  expect(released.status).toBe(200);
  const resumed = await h.services.db.run.findMany({
    where: { issueId: { in: family.childIds }, wakeReason: 'issue_tree_resumed' },
  });
  expect(resumed.map((r) => r.issueId).sort()).toEqual([...family.childIds].sort());
  expect(await h.services.db.resumeClaim.count({ where: { interruptedRunId: { in: family.interrupted } } })).toBe(
    family.interrupted.length,
  );
  expect(released.body.resumed.map((r: { issueId: string }) => r.issueId).sort()).toEqual([...family.childIds].sort());
}
