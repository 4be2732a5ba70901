import { ActivityFailure, proxyActivities, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { StateKey } from '../domain/search-attributes';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS } from './definitions';

export interface WebhookDeliveryInput {
  deliveryId: string;
  /** one attempt's HTTP deadline */
  attemptTimeoutMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
  /** after this, counted from the first attempt, the delivery is dead */
  giveUpMs: number;
  heartbeatTimeoutMs?: number;
}

/**
 * `webhook-delivery:<deliveryId>`: one notification to one subscription. Attempts retry with
 * exponential backoff until `giveUpMs` has passed, then the delivery is marked dead (visible through
 * the API). One workflow per delivery: a slow or dead receiver holds up only its own deliveries.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<{ status: 'delivered' | 'dead' }> {
  // Every attempt is one POST; the retry policy is the 24-hour backoff. A worker that dies mid-POST
  // is noticed within one heartbeat timeout and the attempt repeats with the same delivery id,
  // which receivers dedupe on (docs/api.md, "Quiet notifications (webhooks)": the request's format).
  const { deliverWebhook } = proxyActivities<Activities>({
    startToCloseTimeout: input.attemptTimeoutMs + 30_000,
    heartbeatTimeout: input.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
    scheduleToCloseTimeout: input.giveUpMs,
    retry: {
      initialInterval: input.retryInitialMs,
      backoffCoefficient: 2,
      maximumInterval: input.retryMaxMs,
      nonRetryableErrorTypes: [],
    },
  });
  // bookkeeping only (one database write): retried briefly, it cannot be lost
  const { markWebhookDeliveryDead } = proxyActivities<Activities>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  setCurrentDetails('delivering: attempts retry with backoff until delivered or given up');
  try {
    const status = await deliverWebhook.executeWithOptions({ summary: 'POST the signed notification' }, [
      input.deliveryId,
    ]);
    upsertSearchAttributes([{ key: StateKey, value: status }]);
    setCurrentDetails(`${status}`);
    return { status };
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    await markWebhookDeliveryDead.executeWithOptions({ summary: 'Give up: mark the delivery dead' }, [
      input.deliveryId,
      error.cause?.message ?? error.message,
    ]);
    upsertSearchAttributes([{ key: StateKey, value: 'dead' }]);
    setCurrentDetails(`dead: ${error.cause?.message ?? error.message}`);
    return { status: 'dead' };
  }
}
