/**
 * The webhook delivery workflow's two endings, driven through the API as the main app would: a
 * receiver that answers (delivered), and one that keeps failing past the give-up time (dead). Used
 * by the history recordings (scripts/record-histories.ts).
 */
import { workflowId } from '../domain/ids';
import { eventually, type Harness, type seedCompany } from './harness';
import { startWebhookReceiver } from './webhook-receiver';

type Company = Awaited<ReturnType<typeof seedCompany>>;
/** a Standard Webhooks secret: whsec_ + base64 (the API refuses any other) */
const RECORDING_SECRET = `whsec_${Buffer.from('recording-secret-0123456789').toString('base64')}`;

async function deliveryEnding(h: Harness, c: Company, mode: 'ok' | 'error'): Promise<string> {
  const receiver = await startWebhookReceiver(RECORDING_SECRET);
  receiver.mode = mode;
  // the receiver listens on 127.0.0.1; a give-up time short enough to wait out
  const config = h.services.config;
  const saved = { allow: config.TREEWARDEN_WEBHOOK_ALLOW_PRIVATE, giveUp: config.TREEWARDEN_WEBHOOK_GIVE_UP_MS };
  Object.assign(config, { TREEWARDEN_WEBHOOK_ALLOW_PRIVATE: true, TREEWARDEN_WEBHOOK_GIVE_UP_MS: 2_000 });
  try {
    const hook = await h.request('POST', `/api/companies/${c.companyId}/webhooks`, c.token, {
      url: receiver.url,
      events: ['phase_start'],
      secret: RECORDING_SECRET,
    });
    if (hook.status !== 201) throw new Error(`webhook: ${JSON.stringify(hook.body)}`);
    await h.request('POST', `/api/companies/${c.companyId}/issues`, c.token, {
      title: `webhook ${mode}`,
      status: 'in_progress',
    });
    const delivery = await eventually(
      'the delivery settled',
      () =>
        h.services.db.webhookDelivery.findFirst({
          where: { subscriptionId: hook.body.id, status: { not: 'pending' } },
        }),
      60_000,
    );
    const id = workflowId.webhookDelivery(delivery.id);
    await h.services.client.workflow.getHandle(id).result();
    await h.request('DELETE', `/api/companies/${c.companyId}/webhooks/${hook.body.id}`, c.token);
    return id;
  } finally {
    Object.assign(config, {
      TREEWARDEN_WEBHOOK_ALLOW_PRIVATE: saved.allow,
      TREEWARDEN_WEBHOOK_GIVE_UP_MS: saved.giveUp,
    });
    await receiver.close();
  }
}

export const webhookDelivered = (h: Harness, c: Company) => deliveryEnding(h, c, 'ok');
export const webhookGivenUp = (h: Harness, c: Company) => deliveryEnding(h, c, 'error');
