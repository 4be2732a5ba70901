/** Response shapes of webhooks: the subscription, its one-time secret, and its deliveries. */
import { z } from 'zod';
import { NOTIFICATION_EVENTS } from '../domain/notifications';
import { named, timestamp, uuid } from './schemas';

export const Webhook = named(
  'Webhook',
  z.object({
    id: uuid,
    companyId: uuid,
    url: z.string(),
    events: z.array(z.enum(NOTIFICATION_EVENTS)),
    createdAt: timestamp,
  }),
);
export const CreatedWebhook = named(
  'CreatedWebhook',
  Webhook.extend({ secret: z.string().meta({ description: 'shown only in this answer' }) }),
);
export const WebhookDelivery = named(
  'WebhookDelivery',
  z.object({
    id: uuid,
    notificationId: uuid,
    event: Webhook.shape.events.element,
    kind: z.string(),
    subject: z.string(),
    status: z.enum(['pending', 'delivered', 'dead']),
    attempts: z.number(),
    lastStatusCode: z.number().nullable(),
    lastError: z.string().nullable(),
    createdAt: timestamp,
    deliveredAt: timestamp.nullable(),
    deadAt: timestamp.nullable(),
  }),
);
