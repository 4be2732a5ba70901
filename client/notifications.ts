/** Types of the webhook and postmortem routes (README: "Quiet notifications", "Postmortem metrics"). */

export type NotificationEvent = 'phase_start' | 'new_blocker' | 'terminal_result';

export interface CreateWebhookRequest {
  /** http(s); private addresses are refused unless the service allows them */
  url: string;
  events: NotificationEvent[];
  /** at least 16 characters; generated (`whsec_…`) when absent */
  secret?: string;
}

export interface Webhook {
  id: string;
  companyId: string;
  url: string;
  events: NotificationEvent[];
  createdAt: string;
}

/** Only the creation's answer carries the secret. */
export interface CreatedWebhook extends Webhook {
  secret: string;
}

export interface WebhookDelivery {
  id: string;
  notificationId: string;
  event: NotificationEvent;
  kind: string;
  subject: string;
  status: 'pending' | 'delivered' | 'dead';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  deadAt: string | null;
}

export interface PostmortemFigure {
  value: number | null;
  unit: 'seconds' | 'count';
  /** what the figure counts */
  counts: string;
}

export interface Postmortem {
  issueId: string;
  window: { from: string | null; to: string; description: string };
  productiveTime: PostmortemFigure;
  watchdogRecoveryTime: { p50: PostmortemFigure; max: PostmortemFigure; recovered: number; stillStopped: number; counts: string };
  falseStaleCount: PostmortemFigure;
  orphanMonitorCount: PostmortemFigure;
  contextOverflows: PostmortemFigure;
  detachedProcessCount: PostmortemFigure;
}
