/** Where a webhook may be sent: the URL's shape, and the addresses refused unless configured (SSRF). Pure. */

/**
 * Addresses a webhook must not reach unless configured (SSRF): loopback, private, link-local (cloud
 * metadata), carrier-grade NAT, unspecified, multicast and reserved ranges, IPv4-mapped IPv6 included.
 */
export function isPrivateAddress(ip: string): boolean {
  const lower = ip.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return isPrivateAddress(mapped[1]);
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(lower);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      a >= 224 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 192 && b === 0 && Number(v4[3]) === 0) ||
      (a === 198 && (b === 18 || b === 19))
    );
  }
  if (lower === '::' || lower === '::1') return true;
  const first = parseInt(lower.split(':')[0] || '0', 16);
  // fc00::/7 unique local, fe80::/10 link-local, ff00::/8 multicast
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}

/** A webhook URL must be http(s) with a host, and carry no credentials (they would leak into logs). */
export function webhookUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url: must be an absolute http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `url: must be http or https, not ${url.protocol.replace(/:$/, '')}`;
  if (!url.hostname) return 'url: must name a host';
  if (url.username || url.password) return 'url: must not carry credentials';
  return null;
}
