/**
 * @module The one tree walk (tree/walk.ts): every tree query is bounded at MAX_TREE_DEPTH levels, also on a
 * parent chain that a bad write turned into a cycle, and walks up from many issues keep shared ancestors once.
 */
import { randomUUID } from 'node:crypto';
import { ancestorIds, subtree, watchdogsAbove } from '../tree/queries';
import { MAX_TREE_DEPTH } from '../tree/walk';
import { seedCompany, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

/** A chain of `length` issues, root first. */
async function chain(companyId: string, length: number): Promise<string[]> {
  const ids = Array.from({ length }, () => randomUUID());
  await h.services.db.issue.createMany({
    data: ids.map((id, i) => ({ id, companyId, parentId: i === 0 ? null : ids[i - 1], title: `level ${i}` })),
  });
  return ids;
}

test('a chain deeper than the bound is walked to the bound, up and down', async () => {
  const c = await seedCompany(h);
  const ids = await chain(c.companyId, MAX_TREE_DEPTH + 50);
  const leaf = ids[ids.length - 1];
  expect(await ancestorIds(h.services.db, leaf)).toEqual(ids.slice(-MAX_TREE_DEPTH).reverse());
  const nodes = await subtree(h.services.db, ids[0]);
  expect(nodes.map((n) => n.id)).toEqual(ids.slice(0, MAX_TREE_DEPTH));
  expect(nodes.map((n) => n.depth)).toEqual(Array.from({ length: MAX_TREE_DEPTH }, (_, i) => i));
});

test('a parent cycle left by a bad write ends at the bound instead of running forever', async () => {
  const c = await seedCompany(h);
  const [a, b] = await chain(c.companyId, 2);
  await h.services.db.issue.update({ where: { id: a }, data: { parentId: b } });
  const up = await ancestorIds(h.services.db, b);
  expect(up).toHaveLength(MAX_TREE_DEPTH);
  expect(new Set(up)).toEqual(new Set([a, b]));
});

test('watchdogs above many siblings are found once each', async () => {
  const c = await seedCompany(h);
  const agent = await c.agent();
  const root = await c.issue({ title: 'watched root' });
  const put = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: agent.id });
  expect(put.status).toBe(201);
  const leaves = await Promise.all(
    Array.from({ length: 20 }, (_, i) => c.issue({ title: `leaf ${i}`, parentId: root.id })),
  );
  const found = await watchdogsAbove(
    h.services.db,
    leaves.map((l) => l.id),
  );
  expect(found.map((w) => w.issueId)).toEqual([root.id]);
});
