/**
 * @module Unit: host identity (domain/host.ts) and host queues (domain/task-queue.ts).
 */
import { hostIdFrom, hostIdSchema } from '../../domain/host';
import { hostQueue } from '../../domain/task-queue';
import { parseConfig } from '../../domain/config';

describe('host identity', () => {
  const BOOT = 'e4258d4a-4a55-46c6-9354-a7296d28540d\n';

  test('two PID namespaces on one boot are two hosts; the same namespace is one host', () => {
    expect(hostIdFrom(BOOT, 'pid:[4026531836]')).toBe('e4258d4a4a55-4026531836');
    expect(hostIdFrom(BOOT, 'pid:[4026532178]')).not.toBe(hostIdFrom(BOOT, 'pid:[4026531836]'));
    expect(hostIdFrom(BOOT, 'pid:[4026531836]')).toBe(hostIdFrom(BOOT, 'pid:[4026531836]'));
  });

  test('a reboot is a new host even when the namespace inode repeats', () => {
    expect(hostIdFrom('0b3c5a7e-0000-4000-8000-000000000000', 'pid:[4026531836]')).not.toBe(
      hostIdFrom(BOOT, 'pid:[4026531836]'),
    );
  });

  test('unreadable inputs fail with both values named instead of a made-up id', () => {
    expect(() => hostIdFrom('', 'pid:[1]')).toThrow(/boot id ""/);
    expect(() => hostIdFrom(BOOT, 'pid:')).toThrow(/PID namespace "pid:"/);
  });

  test('a derived id is a valid TREEWARDEN_HOST_ID; spaces, slashes and colons are not', () => {
    expect(hostIdSchema.safeParse(hostIdFrom(BOOT, 'pid:[4026531836]')).success).toBe(true);
    for (const bad of ['', 'a b', 'a/b', 'a:b', '-leading']) expect(hostIdSchema.safeParse(bad).success).toBe(false);
    expect(() => parseConfig({ DATABASE_URL: 'postgresql://u@h/db', TREEWARDEN_HOST_ID: 'a b' })).toThrow(
      /TREEWARDEN_HOST_ID/,
    );
    expect(
      parseConfig({ DATABASE_URL: 'postgresql://u@h/db', TREEWARDEN_HOST_ID: 'rack7-node3' }).TREEWARDEN_HOST_ID,
    ).toBe('rack7-node3');
  });

  test('the host queue of the default task queue is treewarden-host:<hostId>, and deployments sharing a namespace never cross', () => {
    expect(hostQueue('treewarden', 'h1')).toBe('treewarden-host:h1');
    expect(hostQueue('staging', 'h1')).not.toBe(hostQueue('treewarden', 'h1'));
  });
});
