/**
 * @module Quiet notifications (issue 17): a real HTTP receiver gets exactly the notifications of a
 * tree's life (phase starts, newly verified blockers, terminal results), each once, signed; none for
 * bookkeeping. A receiver that is down gets everything once when it returns; one that never answers
 * well ends dead after the give-up time, visible through the API; a slow one delays nobody else.
 * Bad input is a 400 that writes nothing.
 */
import { existsSync } from 'node:fs';
import { createTreewardenClient } from '../client';
import { DELIVERIES_CHANNEL } from '../notifications/dispatcher';
import { runFiles } from '../runs/run-files';
import { eventually, seedCompany, settled, startHarness, type Harness } from '../testing/harness';
import { Webhook } from 'standardwebhooks';
import { startWebhookReceiver, verifies, type WebhookReceiver } from '../testing/webhook-receiver';

let h: Harness;
const receivers: WebhookReceiver[] = [];
beforeAll(async () => {
  h = await startHarness({
    // the receivers listen on 127.0.0.1
    TREEWARDEN_WEBHOOK_ALLOW_PRIVATE: 'true',
    TREEWARDEN_WEBHOOK_RETRY_INITIAL_MS: '200',
    TREEWARDEN_WEBHOOK_RETRY_MAX_MS: '1000',
    TREEWARDEN_WEBHOOK_TIMEOUT_MS: '3000',
    TREEWARDEN_FIRST_RUN_GRACE_MS: '1',
  });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await h?.close();
});

// a Standard Webhooks secret: whsec_ and the base64 of the key
const SECRET = `whsec_${Buffer.from('receiver-secret-0123456789').toString('base64')}`;
const ALL_EVENTS = ['phase_start', 'new_blocker', 'terminal_result'];

async function receiver() {
  const r = await startWebhookReceiver(SECRET);
  receivers.push(r);
  return r;
}

async function subscribe(c: { companyId: string; token: string }, url: string, events = ALL_EVENTS) {
  const created = await h.request('POST', `/api/companies/${c.companyId}/webhooks`, c.token, {
    url,
    events,
    secret: SECRET,
  });
  expect(created.status).toBe(201);
  return created.body as { id: string; secret: string };
}

/** "<kind> <subject>" of everything the receiver accepted, sorted */
const acceptedFacts = (r: WebhookReceiver) =>
  [...r.accepted.values()].map((w) => `${w.json.kind} ${w.json.subject}`).sort();

const deliveriesOf = (subscriptionId: string) => h.services.db.webhookDelivery.findMany({ where: { subscriptionId } });
const allDelivered = async (subscriptionId: string, n: number) => {
  const rows = await deliveriesOf(subscriptionId);
  return rows.length === n && rows.every((d) => d.status === 'delivered');
};

/** Resumed (after a reconciliation) it exits 0 at once; otherwise it works until stopped, without a checkpoint. */
const AGENT =
  'if [ "$TREEWARDEN_WAKE_REASON" = issue_tree_resumed ]; then exit 0; fi; echo up >> "$TREEWARDEN_JOURNAL_FILE"; sleep 600 & wait';

test('a scripted tree life notifies exactly its phase starts, new blockers and terminal results, each once and signed', async () => {
  const r = await receiver();
  const c = await seedCompany(h);
  const hook = await subscribe(c, r.url);
  const agent = await c.agent({ type: 'process', command: 'sh', args: ['-c', AGENT] });
  const watcher = await c.agent();
  const root = await c.issue({ title: 'ship it' });
  const child = await c.issue({ title: 'build it', parentId: root.id, assigneeAgentId: agent.id });

  // start, then bookkeeping: a rename, a comment, and a second entry into in_progress notify nothing
  expect((await h.request('PATCH', `/api/issues/${child.id}`, c.token, { status: 'in_progress' })).status).toBe(200);
  await h.request('PATCH', `/api/issues/${child.id}`, c.token, { title: 'build it well' });
  await h.request('POST', `/api/issues/${child.id}/comments`, c.token, { body: 'a note' });
  await h.request('PATCH', `/api/issues/${child.id}`, c.token, { status: 'todo' });
  await h.request('PATCH', `/api/issues/${child.id}`, c.token, { status: 'in_progress' });
  await h.request('PATCH', `/api/issues/${child.id}`, c.token, { status: 'in_progress' });

  // the agent works; a pause stops it mid-command without a checkpoint: a new execution blocker
  const wake = await h.request('POST', `/api/issues/${child.id}/wake`, c.token, {});
  expect(wake.status).toBe(202);
  const firstRun: string = wake.body.runId;
  await eventually(
    'the agent is mid-command',
    async () =>
      (await h.services.db.run.findUniqueOrThrow({ where: { id: firstRun } })).adapterEntered &&
      existsSync(runFiles(firstRun, null).journal),
  );
  const hold = await h.request('POST', `/api/issues/${root.id}/tree-holds`, c.token, { mode: 'pause' });
  expect(hold.status).toBe(201);
  await settled(h, firstRun);
  const released = await h.request('POST', `/api/issues/${root.id}/tree-holds/${hold.body.id}/release`, c.token, {});
  expect(released.body.skipped).toEqual([{ issueId: child.id, reason: 'execution_blocker' }]);

  // resolution: the reconciled task resumes once and succeeds
  const blocker = await h.services.db.executionBlocker.findFirstOrThrow({ where: { runId: firstRun } });
  expect(
    (
      await h.request('POST', `/api/execution-blockers/${blocker.id}/resolve`, c.token, {
        resolution: 'no_external_effects',
      })
    ).status,
  ).toBe(200);
  const resumed = await eventually('the resumed run', () =>
    h.services.db.run.findFirst({ where: { issueId: child.id, wakeReason: 'issue_tree_resumed' } }),
  );
  expect(await settled(h, resumed.id)).toMatchObject({ status: 'succeeded' });

  // a stopped verdict: the subtree is at rest with the child unfinished; the review run ends
  const watchdog = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  expect(watchdog.status).toBe(201);
  const reviewRun = await eventually('the review run', () =>
    h.services.db.run.findFirst({ where: { agentId: watcher.id } }),
  );
  await settled(h, reviewRun.id);
  expect((await h.request('DELETE', `/api/issues/${root.id}/watchdog`, c.token)).status).toBe(200);

  // completion
  await h.request('PATCH', `/api/issues/${child.id}`, c.token, { status: 'done' });
  await h.request('PATCH', `/api/issues/${root.id}`, c.token, { status: 'done' });
  await h.request('PATCH', `/api/issues/${root.id}`, c.token, { status: 'done' });

  const expected = [
    `issue_in_progress issue:${child.id}`,
    `tree_paused tree-hold:${hold.body.id}`,
    `run_finished run:${firstRun}`,
    `execution_blocker_created execution-blocker:${blocker.id}`,
    `tree_released tree-hold:${hold.body.id}`,
    `run_finished run:${resumed.id}`,
    `watchdog_stopped task-watchdog:${watchdog.body.id}`,
    `run_finished run:${reviewRun.id}`,
    `issue_done issue:${child.id}`,
    `issue_done issue:${root.id}`,
  ].sort();
  await eventually('every notification delivered', () => allDelivered(hook.id, expected.length), 60_000);
  // the recorded facts are exactly these, and each reached the receiver once, on the first try
  const recorded = await h.services.db.notification.findMany({ where: { companyId: c.companyId } });
  expect(recorded.map((n) => `${n.kind} ${n.subject}`).sort()).toEqual(expected);
  expect(acceptedFacts(r)).toEqual(expected);
  expect(r.wire).toHaveLength(expected.length);
  // verified by the Standard Webhooks library itself, and by the deprecated scheme for one more release
  expect(r.wire.every((w) => w.signatureValid && w.legacySignatureValid)).toBe(true);
  expect(
    r.wire.every(
      (w) => w.json.companyId === c.companyId && w.json.deliveryId === w.deliveryId && w.event === w.json.event,
    ),
  ).toBe(true);
  // and the same library refuses a tampered body, a forged id and another key
  const sample = r.wire[0];
  const headers = { 'webhook-id': sample.deliveryId, 'webhook-timestamp': sample.timestamp };
  const signed = { ...headers, 'webhook-signature': sample.signature };
  expect(verifies(new Webhook(SECRET), sample.body, signed)).toBe(true);
  expect(verifies(new Webhook(SECRET), sample.body.replace(c.companyId, 'tampered'), signed)).toBe(false);
  expect(verifies(new Webhook(SECRET), sample.body, { ...signed, 'webhook-id': 'forged' })).toBe(false);
  const otherKey = `whsec_${Buffer.from('another-secret-0123456789').toString('base64')}`;
  expect(verifies(new Webhook(otherKey), sample.body, signed)).toBe(false);
  const families = Object.fromEntries(r.wire.map((w) => [w.json.kind, w.event]));
  expect(families).toEqual({
    issue_in_progress: 'phase_start',
    tree_paused: 'phase_start',
    tree_released: 'phase_start',
    execution_blocker_created: 'new_blocker',
    watchdog_stopped: 'new_blocker',
    run_finished: 'terminal_result',
    issue_done: 'terminal_result',
  });
  const list = await h.request('GET', `/api/companies/${c.companyId}/webhooks/${hook.id}/deliveries`, c.token);
  expect(list.body.items).toHaveLength(expected.length);
  expect(
    list.body.items.every((d: { status: string; attempts: number }) => d.status === 'delivered' && d.attempts === 1),
  ).toBe(true);
});

test('a recovery run that ends terminal-clean raises no new watchdog alert and notifies only its terminal result', async () => {
  const r = await receiver();
  const c = await seedCompany(h);
  const hook = await subscribe(c, r.url);
  const watcher = await c.agent();
  const root = await c.issue({ title: 'watched' });
  await c.issue({ title: 'leaf', parentId: root.id, status: 'done' });
  const watchdog = await h.request('PUT', `/api/issues/${root.id}/watchdog`, c.token, { agentId: watcher.id });
  const reviewRun = await eventually('the review (recovery) run', () =>
    h.services.db.run.findFirst({ where: { agentId: watcher.id } }),
  );
  const ended = await settled(h, reviewRun.id);
  expect(ended).toMatchObject({ status: 'succeeded' });
  // a review run's end changes no verdict, so it signals nothing (domain/change-reach.ts); the watchdog is made to look
  // again after it, as a safety tick would, so the check below sees an evaluation of the ended run
  await eventually('the run end delivered', async () => (await h.services.db.subtreeChange.count()) === 0);
  await h.services.orchestrator.subtreeChanged(
    { watchdogId: watchdog.body.id, companyId: c.companyId, issueId: root.id, title: 'watched' },
    'test_look_again',
  );
  const evaluatedAfter = async () => {
    const row = await h.services.db.watchdog.findUniqueOrThrow({ where: { id: watchdog.body.id } });
    const at = (row.lastEvaluation as { evaluatedAt?: string } | null)?.evaluatedAt;
    return at !== undefined && new Date(at) > ended.finishedAt!;
  };
  await eventually('an evaluation after the review run ended', evaluatedAfter, 30_000);
  await eventually('both notifications delivered', () => allDelivered(hook.id, 2));
  expect(
    await h.services.db.wakeRequest.count({
      where: { idempotencyKey: { startsWith: `task_watchdog:${watchdog.body.id}:` } },
    }),
  ).toBe(1);
  expect(acceptedFacts(r)).toEqual([
    `run_finished run:${reviewRun.id}`,
    `watchdog_stopped task-watchdog:${watchdog.body.id}`,
  ]);
  expect(await h.services.db.notification.count({ where: { companyId: c.companyId } })).toBe(2);
});

test('a receiver that is down gets every notification exactly once after it returns', async () => {
  const r = await receiver();
  const c = await seedCompany(h);
  const hook = await subscribe(c, r.url, ['phase_start']);
  await r.down();
  const issues = await Promise.all([1, 2, 3].map((i) => c.issue({ title: `task ${i}`, status: 'in_progress' })));
  // retried while down: every delivery failed at least twice
  await eventually('failed attempts while the receiver is down', async () => {
    const rows = await deliveriesOf(hook.id);
    return rows.length === 3 && rows.every((d) => d.status === 'pending' && d.attempts >= 2 && d.lastError !== null);
  });
  await r.up();
  await eventually('every delivery delivered', () => allDelivered(hook.id, 3), 30_000);
  expect(acceptedFacts(r)).toEqual(issues.map((i) => `issue_in_progress issue:${i.id}`).sort());
  expect(r.wire).toHaveLength(3);
  expect(r.wire.every((w) => w.signatureValid)).toBe(true);
});

test('a receiver that keeps failing ends dead after the give-up time, visible through the API', async () => {
  const r = await receiver();
  r.mode = 'error';
  const c = await seedCompany(h);
  const hook = await subscribe(c, r.url, ['phase_start']);
  const previous = h.services.config.TREEWARDEN_WEBHOOK_GIVE_UP_MS;
  h.services.config.TREEWARDEN_WEBHOOK_GIVE_UP_MS = 2_000;
  try {
    await c.issue({ title: 'never heard of', status: 'in_progress' });
    const dead = await eventually('the delivery dead', async () => {
      const list = await h.request('GET', `/api/companies/${c.companyId}/webhooks/${hook.id}/deliveries`, c.token);
      return list.body.items[0]?.status === 'dead' ? list.body.items[0] : null;
    });
    expect(dead.attempts).toBeGreaterThanOrEqual(1);
    expect(dead.lastStatusCode).toBe(500);
    expect(dead.deadAt).toEqual(expect.any(String));
  } finally {
    h.services.config.TREEWARDEN_WEBHOOK_GIVE_UP_MS = previous;
  }
});

test('a worker whose listening connection was cut listens again and starts what was recorded meanwhile', async () => {
  const r = await receiver();
  const c = await seedCompany(h);
  const hook = await subscribe(c, r.url, ['phase_start']);
  const listeners = () =>
    h.services.db.$queryRaw<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity WHERE query = ${`LISTEN ${DELIVERIES_CHANNEL}`} AND datname = current_database()`;
  const [cut] = await listeners();
  await h.services.db.$queryRaw`SELECT pg_terminate_backend(${cut.pid})`;
  await c.issue({ title: 'recorded while nobody listened', status: 'in_progress' });
  await eventually('the delivery delivered', () => allDelivered(hook.id, 1), 30_000);
  expect((await listeners()).map((l) => l.pid)).not.toContain(cut.pid);
});

test('a slow receiver delays nobody else', async () => {
  const slow = await receiver();
  slow.mode = 'hold';
  const fast = await receiver();
  const c = await seedCompany(h);
  const slowHook = await subscribe(c, slow.url, ['phase_start']);
  const fastHook = await subscribe(c, fast.url, ['phase_start']);
  await c.issue({ title: 'both hear of it', status: 'in_progress' });
  await eventually('the slow receiver holds its request', async () => slow.held.length > 0);
  await eventually('the fast receiver got its delivery', () => allDelivered(fastHook.id, 1));
  // the slow one's request is still open: nothing waited for it
  expect((await deliveriesOf(slowHook.id))[0].status).toBe('pending');
  slow.mode = 'ok';
  slow.answerHeld(204);
  await eventually('the slow receiver got it too', () => allDelivered(slowHook.id, 1), 30_000);
  expect(fast.accepted.size).toBe(1);
});

describe('subscriptions', () => {
  test('bad input is a 400 naming the problem and writes nothing; another company is 404', async () => {
    const c = await seedCompany(h);
    const post = (body: unknown, token = c.token) =>
      h.request('POST', `/api/companies/${c.companyId}/webhooks`, token, body);
    const ftp = await post({ url: 'ftp://example.com/hook', events: ['phase_start'] });
    expect(ftp.status).toBe(400);
    expect(ftp.body.error.message).toContain('must be http or https');
    expect((await post({ url: 'not a url', events: ['phase_start'] })).status).toBe(400);
    const unknown = await post({ url: 'http://example.com/hook', events: ['comment_added'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('events');
    expect((await post({ url: 'http://example.com/hook', events: [] })).status).toBe(400);
    for (const secret of [
      'short',
      'receiver-secret-0123456789',
      `whsec_${Buffer.from('too short').toString('base64')}`,
    ]) {
      const refused = await post({ url: 'http://example.com/hook', events: ['phase_start'], secret });
      expect([secret, refused.status]).toEqual([secret, 400]);
      expect(refused.body.error.message).toContain('Standard Webhooks secret');
    }
    const previous = h.services.config.TREEWARDEN_WEBHOOK_ALLOW_PRIVATE;
    h.services.config.TREEWARDEN_WEBHOOK_ALLOW_PRIVATE = false;
    try {
      for (const url of [
        'http://127.0.0.1:9/hook',
        'http://localhost/hook',
        'http://10.1.2.3/hook',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]/hook',
        'http://192.168.0.10/x',
      ]) {
        const refused = await post({ url, events: ['phase_start'] });
        expect([url, refused.status]).toEqual([url, 400]);
        expect(refused.body.error.message).toContain('TREEWARDEN_WEBHOOK_ALLOW_PRIVATE');
      }
    } finally {
      h.services.config.TREEWARDEN_WEBHOOK_ALLOW_PRIVATE = previous;
    }
    const other = await seedCompany(h, 'Other');
    expect((await post({ url: 'http://127.0.0.1:9/hook', events: ['phase_start'] }, other.token)).status).toBe(404);
    expect(await h.services.db.webhookSubscription.count({ where: { companyId: c.companyId } })).toBe(0);
  });

  test('create shows the generated secret once; list hides it; delete stops new deliveries', async () => {
    const r = await receiver();
    const c = await seedCompany(h);
    const created = await h.request('POST', `/api/companies/${c.companyId}/webhooks`, c.token, {
      url: r.url,
      events: ['phase_start', 'phase_start'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      url: r.url,
      events: ['phase_start'],
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
    });
    const listed = await h.request('GET', `/api/companies/${c.companyId}/webhooks`, c.token);
    expect(listed.body.items).toEqual([
      {
        id: created.body.id,
        companyId: c.companyId,
        url: r.url,
        events: ['phase_start'],
        createdAt: expect.any(String),
      },
    ]);
    expect(
      (await h.request('DELETE', `/api/companies/${c.companyId}/webhooks/${created.body.id}`, c.token)).status,
    ).toBe(204);
    expect(
      (await h.request('DELETE', `/api/companies/${c.companyId}/webhooks/${created.body.id}`, c.token)).status,
    ).toBe(404);
    expect((await h.request('GET', `/api/companies/${c.companyId}/webhooks`, c.token)).body.items).toEqual([]);
    // a retried create under one Idempotency-Key creates one subscription and answers the same secret
    const create = async () => {
      const res = await fetch(`${h.apiUrl}/api/companies/${c.companyId}/webhooks`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${c.token}`,
          'content-type': 'application/json',
          'idempotency-key': 'hook-1',
        },
        body: JSON.stringify({ url: r.url, events: ['terminal_result'] }),
      });
      return { status: res.status, body: (await res.json()) as { id: string; secret: string } };
    };
    const retried = [await create(), await create()];
    expect(retried.map((x) => x.status)).toEqual([201, 201]);
    expect(retried[1].body).toEqual(retried[0].body);
    // the typed client sees the same subscription, and deletes it
    const client = createTreewardenClient({ baseUrl: h.apiUrl, token: c.token });
    expect((await client.listWebhooks(c.companyId)).items.map((w) => w.id)).toEqual([retried[0].body.id]);
    expect((await client.listWebhookDeliveries(c.companyId, retried[0].body.id)).items).toEqual([]);
    await client.deleteWebhook(c.companyId, retried[0].body.id);
    expect((await client.listWebhooks(c.companyId)).items).toEqual([]);
    await c.issue({ title: 'after the delete', status: 'in_progress' });
    expect(await h.services.db.notification.count({ where: { companyId: c.companyId } })).toBe(1);
    expect(await h.services.db.webhookDelivery.count({ where: { subscriptionId: created.body.id } })).toBe(0);
  });
});
