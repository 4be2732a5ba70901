import { createHash, randomBytes } from 'node:crypto';

/** Bearer secrets are random; only their SHA-256 is stored. */
export function newTokenSecret(prefix: 'twa' | 'twb' | 'twr' | 'two' | 'tws'): string {
  return `${prefix}_${randomBytes(24).toString('base64url')}`;
}

export function hashToken(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
