/** Webhook subscriptions per company (board only): create, list, delete, and their deliveries. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { isStandardWebhookSecret, NOTIFICATION_EVENTS } from '../../domain/notifications';
import { notFound } from '../../domain/errors';
import { safeString } from '../../domain/safe-input';
import { permit } from '../../access/authority';
import type { Deps } from '../../runtime/deps';
import { createWebhook, deleteWebhook, listWebhooks, webhookDeliveries } from '../../notifications/webhooks';
import { createOnce } from '../idempotency';
import type { ZodTypeProvider } from '../openapi';
import { answers, list, NO_CONTENT } from '../schemas';
import { CreatedWebhook, Webhook, WebhookDelivery } from '../schemas-webhooks';
import { companyActor, idParams } from '../validation';

const createSchema = z
  .object({
    url: safeString().max(2_000),
    events: z.array(z.enum(NOTIFICATION_EVENTS)).min(1, 'must name at least one event'),
    // a signing key the receiver already holds; generated when absent
    secret: safeString()
      .max(200)
      .refine(
        isStandardWebhookSecret,
        'must be "whsec_" and the base64 of a key of at least 16 bytes (a Standard Webhooks secret)',
      )
      .optional(),
  })
  .strict();

export function registerWebhookRoutes(app: FastifyInstance, deps: Deps) {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const companyScoped = (request: { actor: Parameters<typeof companyActor>[0]; params: { companyId: string } }) => {
    const actor = companyActor(request.actor);
    if (actor.companyId !== request.params.companyId) throw notFound('company');
    permit(actor, 'webhook.manage', { companyId: request.params.companyId });
    return actor;
  };
  const companyParams = idParams('companyId');
  const webhookParams = idParams('companyId', 'webhookId');

  api.post(
    '/api/companies/:companyId/webhooks',
    {
      schema: {
        summary: 'Subscribe a URL to notifications (board); the answer is the only place the secret is shown',
        params: companyParams,
        body: createSchema,
        response: answers({ 201: CreatedWebhook }),
      },
    },
    async (request, reply) => {
      const actor = companyScoped(request);
      // a retried create with the same Idempotency-Key answers the first subscription (and its secret) again
      return createOnce(deps, request, reply, actor.companyId, async (remember) => ({
        status: 201,
        body: await createWebhook(deps, actor, request.body, (tx, created) =>
          remember(tx, { status: 201, body: created }),
        ),
      }));
    },
  );

  api.get(
    '/api/companies/:companyId/webhooks',
    {
      schema: {
        summary: "The company's webhook subscriptions (board)",
        params: companyParams,
        response: answers({ 200: list(Webhook) }),
      },
    },
    async (request) => {
      const actor = companyScoped(request);
      return { items: await listWebhooks(deps, actor) };
    },
  );

  api.delete(
    '/api/companies/:companyId/webhooks/:webhookId',
    {
      schema: {
        summary: 'Delete a webhook subscription (board)',
        params: webhookParams,
        response: answers({ 204: NO_CONTENT }),
      },
    },
    async (request, reply) => {
      const actor = companyScoped(request);
      await deleteWebhook(deps, actor, request.params.webhookId);
      return reply.status(204).send();
    },
  );

  api.get(
    '/api/companies/:companyId/webhooks/:webhookId/deliveries',
    {
      schema: {
        summary: "A subscription's deliveries with their attempts, delivered or dead (board)",
        params: webhookParams,
        response: answers({ 200: list(WebhookDelivery).extend({ webhook: Webhook }) }),
      },
    },
    async (request) => {
      const actor = companyScoped(request);
      return webhookDeliveries(deps, actor, request.params.webhookId);
    },
  );
}
