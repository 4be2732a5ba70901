/**
 * Host identity for a worker fleet: a host is one process table (one `/proc`). Two containers or PID
 * namespaces on one machine are two hosts, so the id comes from the kernel boot and the PID
 * namespace, never from the hostname (which containers share or reuse).
 */
import { z } from 'zod';

/** Safe in a task queue name, a URL path segment and a log line. */
export const hostIdSchema = z
  .string()
  .min(1)
  .max(120)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be letters, digits, ".", "_" or "-"');

/**
 * The default id: the first 12 hex digits of the boot id (a reboot is a new host: nothing survives
 * it) and the PID namespace's inode (`pid:[4026531836]` → `4026531836`).
 */
export function hostIdFrom(bootId: string, pidNamespaceLink: string): string {
  const boot = bootId.trim().replace(/-/g, '').slice(0, 12);
  const inode = /\[(\d+)\]/.exec(pidNamespaceLink)?.[1];
  if (!/^[0-9a-f]{12}$/i.test(boot) || !inode)
    throw new Error(`cannot derive a host id from boot id "${bootId.trim()}" and PID namespace "${pidNamespaceLink}"`);
  return `${boot.toLowerCase()}-${inode}`;
}
