/** Which host's `/proc` this process sees (domain/host.ts explains the id). */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostIdFrom } from '../domain/host';
import type { Config } from '../domain/config';

export function resolveHostId(config: Pick<Config, 'TREEWARDEN_HOST_ID'>): string {
  return (
    config.TREEWARDEN_HOST_ID ??
    hostIdFrom(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'), readlinkSync('/proc/self/ns/pid'))
  );
}
