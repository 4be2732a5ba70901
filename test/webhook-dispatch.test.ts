/**
 * @module Starting webhook deliveries without a poll (issue 17): nothing polls while a worker listens, so a round
 * that failed to start its deliveries must be tried again on its own. Here the failure is Temporal's: the
 * dispatcher's namespace lacks treewarden's search attributes until the test registers them.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import pino from 'pino';
import { workflowId } from '../domain/ids';
import { SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { startDeliveryDispatcher } from '../notifications/dispatcher';
import { registerSearchAttributes } from '../temporal/search-attributes';
import { createTemporalOrchestrator } from '../temporal/temporal-orchestrator';
import { eventually, seedCompany, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  // no worker: the dispatcher started below is the only one, so only its retry can start the delivery
  h = await startHarness({ TREEWARDEN_WEBHOOK_ALLOW_PRIVATE: 'true' }, { inProcessWorker: false });
});
afterAll(async () => {
  await h?.close();
});

test('a round that failed to start its deliveries is tried again until they start, each once', async () => {
  const { connection } = h.services.client;
  const namespace = `tw-dispatch-retry-${randomBytes(4).toString('hex')}`;
  await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1d') });
  const failures: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void failures.push(line) });
  const client = new Client({ connection, namespace });
  const dispatcher = startDeliveryDispatcher(
    { ...h.services, log, orchestrator: createTemporalOrchestrator(client, h.services.config) },
    200,
  );
  try {
    const c = await seedCompany(h);
    const hook = await h.request('POST', `/api/companies/${c.companyId}/webhooks`, c.token, {
      url: 'http://127.0.0.1:9/never-called',
      events: ['phase_start'],
      secret: `whsec_${Buffer.from('receiver-secret-0123456789').toString('base64')}`,
    });
    expect(hook.status).toBe(201);
    await c.issue({ title: 'announced while starts fail', status: 'in_progress' });
    const delivery = await eventually('the delivery recorded', () =>
      h.services.db.webhookDelivery.findFirst({ where: { subscriptionId: hook.body.id } }),
    );
    await eventually(
      'two failed rounds',
      async () => failures.filter((line) => line.includes('starting webhook deliveries failed')).length >= 2,
    );
    expect((await h.services.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).dispatchedAt).toBe(
      null,
    );

    await registerSearchAttributes(connection, namespace, SEARCH_ATTRIBUTE_TYPES, () => {});
    await eventually(
      'started by a later round',
      async () =>
        (await h.services.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).dispatchedAt !== null,
      60_000,
    );
    const started = await client.workflow.count(`WorkflowId = '${workflowId.webhookDelivery(delivery.id)}'`);
    expect(started.count).toBe(1);
  } finally {
    await dispatcher.stop();
  }
});
