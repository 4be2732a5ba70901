/**
 * Where a webhook may go (SSRF): its host is resolved, and every address it resolves to must be
 * public unless TREEWARDEN_WEBHOOK_ALLOW_PRIVATE is set. Checked when a subscription is created and
 * again at every attempt, which connects to the address checked (a DNS answer changed in between
 * cannot send a delivery inside the network).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isPrivateAddress } from '../domain/webhook-address';

export class WebhookAddressRefusedError extends Error {
  override readonly name = 'WebhookAddressRefusedError';
}

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

export async function checkedWebhookAddress(url: URL, allowPrivate: boolean): Promise<CheckedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch (error) {
      throw new WebhookAddressRefusedError(
        `url: host ${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  if (addresses.length === 0) throw new WebhookAddressRefusedError(`url: host ${host} does not resolve`);
  if (!allowPrivate) {
    const refused = addresses.find((a) => isPrivateAddress(a.address));
    if (refused) {
      throw new WebhookAddressRefusedError(
        `url: ${host} is a private or loopback address (${refused.address}); ` +
          'webhooks reach public addresses only unless TREEWARDEN_WEBHOOK_ALLOW_PRIVATE=true',
      );
    }
  }
  return { address: addresses[0].address, family: addresses[0].family === 6 ? 6 : 4 };
}
