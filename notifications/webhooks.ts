/** Webhook subscriptions of a company: create (URL checked, secret shown once), list, delete, deliveries. */
import { randomBytes } from 'node:crypto';
import { AppError, notFound } from '../domain/errors';
import type { NotificationEvent } from '../domain/notifications';
import { webhookUrlProblem } from '../domain/webhook-address';
import { logActivity } from '../db/activity-log';
import type { Deps } from '../runtime/deps';
import type { OnCreated } from '../db/prisma';
import type { ScopedActor } from '../domain/actor';
import { deliveriesOf } from './notifications';
import { checkedWebhookAddress, WebhookAddressRefusedError } from './webhook-address';

export interface WebhookInput {
  url: string;
  events: NotificationEvent[];
  secret?: string;
}

function presentWebhook(row: { id: string; companyId: string; url: string; events: string[]; createdAt: Date }) {
  return { id: row.id, companyId: row.companyId, url: row.url, events: row.events, createdAt: row.createdAt };
}

/** `onCreated` runs in the creating transaction (an Idempotency-Key's reply is stored there). */
export async function createWebhook(
  deps: Deps,
  actor: ScopedActor,
  input: WebhookInput,
  onCreated?: OnCreated<WebhookCreated>,
) {
  const problem = webhookUrlProblem(input.url);
  if (problem) throw new AppError('bad_request', problem);
  try {
    await checkedWebhookAddress(new URL(input.url), deps.config.TREEWARDEN_WEBHOOK_ALLOW_PRIVATE);
  } catch (error) {
    if (error instanceof WebhookAddressRefusedError) throw new AppError('bad_request', error.message);
    throw error;
  }
  const secret = input.secret ?? `whsec_${randomBytes(24).toString('base64')}`;
  return deps.db.$transaction(async (tx) => {
    const row = await tx.webhookSubscription.create({
      data: { companyId: actor.companyId, url: input.url, events: [...new Set(input.events)], secret },
    });
    // the URL only: the secret never enters the audit log
    await logActivity(tx, {
      companyId: actor.companyId,
      actor,
      action: 'webhook.created',
      entityType: 'webhook',
      entityId: row.id,
      details: { url: row.url, events: row.events },
    });
    const created: WebhookCreated = { ...presentWebhook(row), secret };
    await onCreated?.(tx, created);
    return created;
  });
}

export type WebhookCreated = ReturnType<typeof presentWebhook> & { secret: string };

export async function listWebhooks(deps: Deps, actor: ScopedActor) {
  const rows = await deps.db.webhookSubscription.findMany({
    where: { companyId: actor.companyId, deletedAt: null },
    orderBy: { createdAt: 'asc' },
  });
  return rows.map(presentWebhook);
}

async function webhookOf(deps: Deps, actor: ScopedActor, webhookId: string) {
  const row = await deps.db.webhookSubscription.findUnique({ where: { id: webhookId } });
  if (!row || row.companyId !== actor.companyId || row.deletedAt) throw notFound('webhook');
  return row;
}

/** No new deliveries from now on; pending ones go dead at their next attempt. */
export async function deleteWebhook(deps: Deps, actor: ScopedActor, webhookId: string) {
  const row = await webhookOf(deps, actor, webhookId);
  await deps.db.$transaction(async (tx) => {
    const { count } = await tx.webhookSubscription.updateMany({
      where: { id: row.id, deletedAt: null },
      data: { deletedAt: new Date() },
    });
    if (count === 0) throw notFound('webhook');
    await logActivity(tx, {
      companyId: actor.companyId,
      actor,
      action: 'webhook.deleted',
      entityType: 'webhook',
      entityId: row.id,
      details: { url: row.url },
    });
  });
}

export async function webhookDeliveries(deps: Deps, actor: ScopedActor, webhookId: string) {
  const row = await webhookOf(deps, actor, webhookId);
  return { webhook: presentWebhook(row), items: await deliveriesOf(deps.db, row.id) };
}
