/**
 * Quiet notifications (seed 003 P1): which recorded facts notify, under which dedupe key, and how a
 * delivery is signed. Pure: notifications/notifications.ts reads and writes, this decides.
 *
 * Only three event families notify; every other write (comments, renames, findings, wakes,
 * bookkeeping) is silent by construction, because the mapping below knows nothing else.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export const NOTIFICATION_EVENTS = ['phase_start', 'new_blocker', 'terminal_result'] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** What exactly happened, inside its family. */
export type NotificationKind =
  | 'issue_in_progress'
  | 'tree_paused'
  | 'tree_released'
  | 'execution_blocker_created'
  | 'watchdog_stopped'
  | 'watchdog_escalated'
  | 'liveness_recovered'
  | 'run_finished'
  | 'issue_done'
  | 'issue_cancelled';

export interface NotificationFact {
  event: NotificationEvent;
  kind: NotificationKind;
  /** the entity the fact is about, `<kind>:<id>` */
  subject: string;
  /** which state of the subject: the same (subject, stateVersion, hash) is the same fact */
  stateVersion: string;
  issueId: string | null;
  data: Record<string, unknown>;
}

/** An audit record as db/activity-log.ts writes it: the one place every fact passes through. */
export interface RecordedWrite {
  action: string;
  entityType: string;
  entityId: string;
  details: Record<string, unknown>;
  /** the audit record's own id: the state version of a fact that can recur (an issue done, reopened, done) */
  recordId: string;
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const pick = (details: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.map((key) => [key, details[key] ?? null]));

/** The notification a recorded write makes, or null: most writes make none. */
export function notificationFor(write: RecordedWrite): NotificationFact | null {
  const { action, entityId, details } = write;
  switch (action) {
    case 'issue.created':
      // created straight into in_progress: its phase starts now
      return details.status === 'in_progress' ? issuePhaseStart(entityId, null) : null;
    case 'issue.updated': {
      const changes = (details.changes ?? {}) as { status?: unknown };
      const previous = str(details.previousStatus);
      const status = str(changes.status);
      if (!status || status === previous) return null;
      if (status === 'in_progress') return issuePhaseStart(entityId, previous);
      if (status === 'done' || status === 'cancelled') {
        return {
          event: 'terminal_result',
          kind: status === 'done' ? 'issue_done' : 'issue_cancelled',
          subject: `issue:${entityId}`,
          // done → todo → done is two results; a retried PATCH (done → done) is none
          stateVersion: write.recordId,
          issueId: entityId,
          data: { issueId: entityId, status, previousStatus: previous },
        };
      }
      return null;
    }
    case 'issue.tree_hold_created':
    case 'issue.tree_hold_released': {
      const holdId = str(details.holdId);
      if (!holdId) return null;
      const paused = action === 'issue.tree_hold_created';
      return {
        event: 'phase_start',
        kind: paused ? 'tree_paused' : 'tree_released',
        subject: `tree-hold:${holdId}`,
        stateVersion: paused ? 'paused' : 'released',
        issueId: entityId,
        data: {
          holdId,
          rootIssueId: entityId,
          ...(paused ? { reason: details.reason ?? null } : { wakeAgents: details.wakeAgents ?? false }),
        },
      };
    }
    case 'execution_blocker.created': {
      const blockerId = str(details.blockerId);
      if (!blockerId) return null;
      return {
        event: 'new_blocker',
        kind: 'execution_blocker_created',
        subject: `execution-blocker:${blockerId}`,
        stateVersion: 'active',
        issueId: str(details.issueId),
        data: {
          blockerId,
          issueId: details.issueId ?? null,
          runId: entityId,
          cause: details.cause ?? null,
          nextAction: details.nextAction ?? null,
        },
      };
    }
    case 'issue.liveness_recovered': {
      const recoveryId = str(details.recoveryId);
      if (!recoveryId) return null;
      return {
        event: 'new_blocker',
        kind: 'liveness_recovered',
        subject: `liveness-recovery:${recoveryId}`,
        // a recovery is once per stall: its row is the stall
        stateVersion: 'recovered',
        issueId: entityId,
        data: { issueId: entityId, recoveryId, ...pick(details, ['wakeRequestId', 'latestRunId', 'stalledForMs']) },
      };
    }
    case 'issue.task_watchdog_triggered':
    case 'issue.task_watchdog_escalated':
      return watchdogFact(action === 'issue.task_watchdog_escalated', entityId, details);
    default: {
      const finished = /^run\.(succeeded|failed|cancelled|timed_out)$/.exec(action);
      if (!finished || write.entityType !== 'run') return null;
      return {
        event: 'terminal_result',
        kind: 'run_finished',
        subject: `run:${entityId}`,
        // a run settles once: its terminal status is its last state
        stateVersion: 'terminal',
        issueId: str(details.issueId),
        data: {
          runId: entityId,
          issueId: details.issueId ?? null,
          status: finished[1],
          stopKind: details.stopKind ?? null,
        },
      };
    }
  }
}

/** A watchdog's new stop (`watchdog_stopped`) or its escalation to people (`watchdog_escalated`): once per stop. */
function watchdogFact(
  escalated: boolean,
  watchedIssueId: string,
  details: Record<string, unknown>,
): NotificationFact | null {
  const watchdogId = str(details.watchdogId);
  const fingerprint = str(details.stopFingerprint);
  if (!watchdogId || !fingerprint) return null;
  const stop = { watchdogId, watchedIssueId, fingerprint };
  return {
    event: 'new_blocker',
    kind: escalated ? 'watchdog_escalated' : 'watchdog_stopped',
    subject: `task-watchdog:${watchdogId}`,
    // once per stop fingerprint, like the watchdog's own wake; its escalation is a fact of its own
    stateVersion: escalated ? `escalated:${fingerprint}` : fingerprint,
    issueId: watchedIssueId,
    data: escalated
      ? {
          ...stop,
          interactionId: details.interactionId ?? null,
          rechecks: details.recheckCount ?? null,
          repeatLimit: details.repeatLimit ?? null,
        }
      : { ...stop, reviewIssueId: details.reviewIssueId ?? null, stoppedLeafIds: details.stoppedLeaves ?? [] },
  };
}

function issuePhaseStart(issueId: string, previousStatus: string | null): NotificationFact {
  return {
    event: 'phase_start',
    kind: 'issue_in_progress',
    subject: `issue:${issueId}`,
    // "for the first time": one state version for every entry into in_progress, so only the first notifies
    stateVersion: 'in_progress',
    issueId,
    data: { issueId, previousStatus },
  };
}

/** The fact's hash, the third part of its dedupe key: what happened, not when it was recorded. */
export function notificationHash(fact: Pick<NotificationFact, 'event' | 'kind' | 'subject' | 'stateVersion'>): string {
  return createHash('sha256')
    .update(JSON.stringify([fact.event, fact.kind, fact.subject, fact.stateVersion]))
    .digest('hex');
}

/**
 * Header names of a delivery (documented in docs/api.md, "Quiet notifications (webhooks)"): the Standard Webhooks
 * set (`webhook-id` is the delivery id), and the older `treewarden-*` set, deprecated, sent for one more release.
 */
export const WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
  event: 'treewarden-event',
  legacyDelivery: 'treewarden-delivery',
  legacyTimestamp: 'treewarden-timestamp',
  legacySignature: 'treewarden-signature',
} as const;

/** A Standard Webhooks secret: `whsec_` and the base64 of a key of 16 bytes or more, as its libraries read it. */
export const isStandardWebhookSecret = (secret: string): boolean =>
  standardSigner(secret) !== null && Buffer.from(secret.slice('whsec_'.length), 'base64').length >= 16;

function standardSigner(secret: string): Webhook | null {
  if (!secret.startsWith('whsec_')) return null;
  try {
    return new Webhook(secret);
  } catch {
    return null;
  }
}

/**
 * The signed headers of one delivery. The Standard Webhooks signature covers `<id>.<timestamp>.<body>` (a receiver
 * verifies it with the `standardwebhooks` library and refuses old timestamps, hence replays); a subscription whose
 * secret predates the format gets the deprecated headers only.
 */
export function webhookHeaders(secret: string, deliveryId: string, timestampSeconds: number, body: string) {
  const signer = standardSigner(secret);
  return {
    ...(signer
      ? {
          [WEBHOOK_HEADERS.id]: deliveryId,
          [WEBHOOK_HEADERS.timestamp]: String(timestampSeconds),
          [WEBHOOK_HEADERS.signature]: signer.sign(deliveryId, new Date(timestampSeconds * 1000), body),
        }
      : {}),
    [WEBHOOK_HEADERS.legacyDelivery]: deliveryId,
    [WEBHOOK_HEADERS.legacyTimestamp]: String(timestampSeconds),
    [WEBHOOK_HEADERS.legacySignature]: signWebhook(secret, timestampSeconds, body),
  };
}

/**
 * Deprecated (the `treewarden-signature` header): `v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`, the secret
 * string itself as the key.
 */
export function signWebhook(secret: string, timestampSeconds: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex')}`;
}

/** The deprecated headers' check: the signature matches and the timestamp is within `toleranceSeconds` of now. */
export function verifyWebhook(
  secret: string,
  headers: { timestamp: string; signature: string },
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const timestamp = Number(headers.timestamp);
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, timestamp, body));
  const given = Buffer.from(headers.signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
