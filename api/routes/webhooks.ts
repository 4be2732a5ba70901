/** Webhook subscriptions per company (board only): create, list, delete, and their deliveries. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { NOTIFICATION_EVENTS } from '../../domain/notifications';
import { notFound } from '../../domain/errors';
import { safeString } from '../../domain/safe-input';
import { permit } from '../../services/authority';
import type { Deps } from '../../services/deps';
import { createWebhook, deleteWebhook, listWebhooks, webhookDeliveries } from '../../services/webhooks';
import { createOnce } from '../idempotency';
import { companyActor, ids, parse } from '../validation';

const createSchema = z
  .object({
    url: safeString().max(2_000),
    events: z.array(z.enum(NOTIFICATION_EVENTS)).min(1, 'must name at least one event'),
    // a signing key the receiver already holds; generated when absent
    secret: safeString().min(16, 'must be at least 16 characters').max(200).optional(),
  })
  .strict();

export function registerWebhookRoutes(app: FastifyInstance, deps: Deps) {
  const companyScoped = (request: { actor: Parameters<typeof companyActor>[0]; params: unknown }, ...extra: 'webhookId'[]) => {
    const params = ids(request.params, 'companyId', ...extra);
    const actor = companyActor(request.actor);
    if (actor.companyId !== params.companyId) throw notFound('company');
    permit(actor, 'webhook.manage', { companyId: params.companyId });
    return { actor, params };
  };

  app.post('/api/companies/:companyId/webhooks', async (request, reply) => {
    const { actor } = companyScoped(request);
    const body = parse(createSchema, request.body);
    // a retried create with the same Idempotency-Key answers the first subscription (and its secret) again
    return createOnce(deps, request, reply, actor.companyId, async (remember) => ({
      status: 201,
      body: await createWebhook(deps, actor, body, (tx, created) => remember(tx, { status: 201, body: created })),
    }));
  });

  app.get('/api/companies/:companyId/webhooks', async (request) => {
    const { actor } = companyScoped(request);
    return { items: await listWebhooks(deps, actor) };
  });

  app.delete('/api/companies/:companyId/webhooks/:webhookId', async (request, reply) => {
    const { actor, params } = companyScoped(request, 'webhookId');
    await deleteWebhook(deps, actor, params.webhookId);
    return reply.status(204).send();
  });

  app.get('/api/companies/:companyId/webhooks/:webhookId/deliveries', async (request) => {
    const { actor, params } = companyScoped(request, 'webhookId');
    return webhookDeliveries(deps, actor, params.webhookId);
  });
}
