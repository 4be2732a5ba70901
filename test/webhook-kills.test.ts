/**
 * @module A worker process SIGKILLed in the middle of a webhook delivery (its POST sent, the
 * receiver's answer not yet read) loses nothing and duplicates nothing the receiver keeps: each
 * notification has exactly one delivery, it ends delivered, and the retried POST carries the same
 * delivery id and body, so the receiver (deduping on that id) takes each notification exactly once.
 */
import { workflowId } from '../domain/ids';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';
import { startWebhookReceiver, type WebhookReceiver } from '../testing/webhook-receiver';
import { workerFleet, workerRunning, type WorkerFleet } from '../testing/worker-fleet';

// each test stops and starts worker processes: 20 to 40 s alone, two to three times that beside a full run's
// heaviest files on the 2-core CI machine, past the default 120 s
jest.setTimeout(300_000);

let h: Harness;
let fleet: WorkerFleet;
let receiver: WebhookReceiver;
// a Standard Webhooks secret: whsec_ and the base64 of the key
const SECRET = `whsec_${Buffer.from('receiver-secret-0123456789').toString('base64')}`;
beforeAll(async () => {
  // a dead worker's attempt moves to a live one after 4 s (as in worker-kills.test.ts)
  h = await startHarness(
    {
      TREEWARDEN_HEARTBEAT_TIMEOUT_MS: '4000',
      TREEWARDEN_WEBHOOK_ALLOW_PRIVATE: 'true',
      TREEWARDEN_WEBHOOK_RETRY_INITIAL_MS: '200',
    },
    { inProcessWorker: false },
  );
  fleet = workerFleet(h);
  await Promise.all([fleet.start(), fleet.start()]);
  receiver = await startWebhookReceiver(SECRET);
});
afterAll(async () => {
  await Promise.allSettled(replacements);
  await receiver?.close();
  await fleet?.close();
  await h?.close();
});

const replacements: Promise<unknown>[] = [];

test('a worker killed mid-delivery still gives exactly one delivery per notification', async () => {
  let killedMidPost = 0;
  let wireRepeats = 0;
  for (let trial = 0; trial < 3; trial++) {
    if (fleet.workers.length < 2) await Promise.all(replacements.splice(0));
    const c = await seedCompany(h);
    const hook = await h.request('POST', `/api/companies/${c.companyId}/webhooks`, c.token, {
      url: receiver.url,
      events: ['phase_start'],
      secret: SECRET,
    });
    expect(hook.status).toBe(201);
    receiver.mode = 'hold';
    const heldBefore = receiver.held.length;
    await Promise.all([1, 2].map((i) => c.issue({ title: `trial ${trial} task ${i}`, status: 'in_progress' })));
    await eventually('both POSTs sent and held', async () => receiver.held.length >= heldBefore + 2, 60_000);
    const victimDelivery = receiver.held[heldBefore].deliveryId;
    const identity = await workerRunning(
      h.services.client,
      workflowId.webhookDelivery(victimDelivery),
      'deliverWebhook',
    );
    const victim = fleet.workers.find((w) => w.identity === identity);
    expect(victim).toBeDefined();
    await fleet.kill(victim!);
    killedMidPost++;
    replacements.push(fleet.start());
    // the other worker's request (if it had one) is answered; the killed one's connection is gone
    receiver.mode = 'ok';
    receiver.answerHeld(204);

    const deliveries = await eventually(
      'both deliveries delivered',
      async () => {
        const rows = await h.services.db.webhookDelivery.findMany({ where: { subscriptionId: hook.body.id } });
        return rows.length === 2 && rows.every((d) => d.status === 'delivered') ? rows : null;
      },
      60_000,
    );
    expect(await h.services.db.notification.count({ where: { companyId: c.companyId } })).toBe(2);
    for (const delivery of deliveries) {
      const onWire = receiver.wire.filter((w) => w.deliveryId === delivery.id);
      // every repeat is the same notification, signed anew
      expect(new Set(onWire.map((w) => w.json.id)).size).toBe(1);
      expect(onWire.every((w) => w.signatureValid)).toBe(true);
      expect(receiver.accepted.get(delivery.id)?.json.id).toBe(delivery.notificationId);
      wireRepeats += onWire.length - 1;
    }
    // the killed worker's POST was retried by another worker
    expect(receiver.wire.filter((w) => w.deliveryId === victimDelivery).length).toBeGreaterThanOrEqual(2);
  }
  const companies = new Set([...receiver.accepted.values()].map((w) => w.json.companyId));
  expect(companies.size).toBe(3);
  expect(receiver.accepted.size).toBe(6);
  process.stdout.write(
    `webhook kills: ${killedMidPost} workers killed mid-POST, ${wireRepeats} repeated POSTs on the wire, ${receiver.accepted.size} notifications taken once each\n`,
  );
});
