/**
 * A real HTTP receiver of treewarden webhooks, as a main app would run one: it verifies each
 * delivery with the Standard Webhooks library (`standardwebhooks`, not treewarden's code), checks the
 * deprecated signature with its own HMAC, dedupes on the delivery id (`webhook-id`), and can be taken
 * down (connections refused) and brought back on the same port, answer errors, or hold requests.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export interface ReceivedWebhook {
  deliveryId: string;
  event: string;
  timestamp: string;
  signature: string;
  body: string;
  json: {
    id: string;
    deliveryId: string;
    event: string;
    kind: string;
    subject: string;
    stateVersion: string;
    companyId: string;
    issueId: string | null;
    data: Record<string, unknown>;
  };
  /** `standardwebhooks`' own verification of the webhook-* headers passed */
  signatureValid: boolean;
  /** the receiver's own HMAC check of the deprecated "<timestamp>.<body>" signature */
  legacySignatureValid: boolean;
}

export type ReceiverMode = 'ok' | 'error' | 'hold';

export interface WebhookReceiver {
  url: string;
  /** every request that reached the receiver, duplicates included */
  wire: ReceivedWebhook[];
  /** the first request of each delivery id (the receiver's dedupe), taken on receipt */
  accepted: Map<string, ReceivedWebhook>;
  /** requests whose answer is held back in `hold` mode, until `answerHeld` (or the sender goes away) */
  held: ReceivedWebhook[];
  mode: ReceiverMode;
  answerHeld(status: number): void;
  /** stop listening: connections are refused until `up` */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

/** True when the Standard Webhooks library accepts the delivery (signature, and a timestamp within tolerance). */
export function verifies(verifier: Webhook, body: string, headers: http.IncomingHttpHeaders): boolean {
  try {
    verifier.verify(body, headers as Record<string, string>);
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
}

export async function startWebhookReceiver(secret: string): Promise<WebhookReceiver> {
  const verifier = new Webhook(secret);
  let port = 0;
  let server: http.Server | null = null;
  const pending: http.ServerResponse[] = [];
  const receiver: WebhookReceiver = {
    url: '',
    wire: [],
    accepted: new Map(),
    held: [],
    mode: 'ok',
    answerHeld(status) {
      for (const response of pending.splice(0)) if (!response.writableEnded) response.writeHead(status).end();
    },
    async down() {
      const closing = server;
      server = null;
      if (!closing) return;
      receiver.answerHeld(503);
      closing.closeAllConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
    async up() {
      server = http.createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (c: Buffer) => chunks.push(c));
        request.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const header = (name: string) => String(request.headers[name] ?? '');
          const timestamp = header('webhook-timestamp');
          const legacy = `${header('treewarden-timestamp')}.${body}`;
          const received: ReceivedWebhook = {
            deliveryId: header('webhook-id'),
            event: header('treewarden-event'),
            timestamp,
            signature: header('webhook-signature'),
            body,
            json: JSON.parse(body) as ReceivedWebhook['json'],
            signatureValid: verifies(verifier, body, request.headers),
            legacySignatureValid:
              header('treewarden-signature') === `v1=${createHmac('sha256', secret).update(legacy).digest('hex')}`,
          };
          receiver.wire.push(received);
          if (receiver.mode === 'error') return void response.writeHead(500).end();
          // processed on receipt, deduped on the delivery id: a sender that dies before it reads the
          // answer sends the same delivery again, and the receiver takes it once
          if (!receiver.accepted.has(received.deliveryId)) receiver.accepted.set(received.deliveryId, received);
          if (receiver.mode === 'hold') {
            receiver.held.push(received);
            pending.push(response);
            return;
          }
          response.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', () => resolve()));
      port = (server.address() as AddressInfo).port;
      receiver.url = `http://127.0.0.1:${port}/hooks/treewarden`;
    },
    async close() {
      await receiver.down();
    },
  };
  await receiver.up();
  return receiver;
}
