/**
 * One webhook delivery attempt: a signed POST to the subscription's URL, connected to the address
 * checked for SSRF. A 2xx settles the delivery once (a CAS on `pending`); anything else records the
 * attempt and throws, and the workflow's retry policy decides when to try again.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { WEBHOOK_HEADERS, webhookHeaders } from '../domain/notifications';
import type { Deps } from '../runtime/deps';
import { checkedWebhookAddress, WebhookAddressRefusedError } from '../notifications/webhook-address';

/** A failed attempt; retried by the workflow until the delivery is given up. */
export class WebhookAttemptError extends Error {
  override readonly name = 'WebhookAttemptError';
}

export async function deliverWebhook(deps: Deps, deliveryId: string): Promise<'delivered' | 'dead'> {
  const delivery = await deps.db.webhookDelivery.findUniqueOrThrow({
    where: { id: deliveryId },
    include: { subscription: true, notification: true },
  });
  if (delivery.status !== 'pending') return delivery.status;
  if (delivery.subscription.deletedAt) {
    await markWebhookDeliveryDead(deps, deliveryId, 'subscription deleted');
    return 'dead';
  }
  const body = JSON.stringify({ ...(delivery.notification.payload as object), deliveryId });
  let statusCode: number | null = null;
  try {
    const url = new URL(delivery.subscription.url);
    const target = await checkedWebhookAddress(url, deps.config.TREEWARDEN_WEBHOOK_ALLOW_PRIVATE);
    const timestamp = Math.floor(Date.now() / 1000);
    statusCode = await post(url, target, body, deps.config.TREEWARDEN_WEBHOOK_TIMEOUT_MS, {
      ...webhookHeaders(delivery.subscription.secret, deliveryId, timestamp, body),
      [WEBHOOK_HEADERS.event]: delivery.notification.event,
    });
    if (statusCode < 200 || statusCode > 299) throw new WebhookAttemptError(`receiver answered ${statusCode}`);
  } catch (error) {
    const message =
      error instanceof WebhookAttemptError || error instanceof WebhookAddressRefusedError
        ? error.message
        : `request failed: ${(error as Error).message}`;
    await deps.db.webhookDelivery.updateMany({
      where: { id: deliveryId, status: 'pending' },
      data: { attempts: { increment: 1 }, lastStatusCode: statusCode, lastError: message },
    });
    throw new WebhookAttemptError(message);
  }
  await deps.db.webhookDelivery.updateMany({
    where: { id: deliveryId, status: 'pending' },
    data: {
      status: 'delivered',
      deliveredAt: new Date(),
      attempts: { increment: 1 },
      lastStatusCode: statusCode,
      lastError: null,
    },
  });
  return 'delivered';
}

export async function markWebhookDeliveryDead(deps: Deps, deliveryId: string, reason: string): Promise<void> {
  await deps.db.webhookDelivery.updateMany({
    where: { id: deliveryId, status: 'pending' },
    data: { status: 'dead', deadAt: new Date(), lastError: reason },
  });
}

/** Resolves with the status code; the response body is read and dropped (receivers answer briefly). */
function post(
  url: URL,
  target: { address: string; family: 4 | 6 },
  body: string,
  timeoutMs: number,
  headers: Record<string, string>,
): Promise<number> {
  // the name was resolved and checked once: connect to exactly that address (TLS still verifies the name)
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      url,
      {
        method: 'POST',
        lookup,
        timeout: timeoutMs,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'treewarden-webhooks',
          ...headers,
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', reject);
    request.end(body);
  });
}
