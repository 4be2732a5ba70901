/** Request parsing: ids and bodies are validated before anything is read or written. */
import { z } from 'zod';
import type { Actor } from '../domain/actor';
import { AppError } from '../domain/errors';
import { uuidSchema } from '../domain/ids';
import { safeString } from '../domain/safe-input';
import { ISSUE_STATUSES } from '../domain/statuses';
import type { ScopedActor } from '../services/issues';

export function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  return schema.parse(value ?? {});
}

/** Path ids: a malformed id is a 400 naming the parameter. */
export function ids<K extends string>(params: unknown, ...names: K[]): Record<K, string> {
  const raw = (params ?? {}) as Record<string, unknown>;
  const out = {} as Record<K, string>;
  for (const name of names) {
    const result = uuidSchema.safeParse(raw[name]);
    if (!result.success) throw new AppError('bad_request', `malformed id in path: ${name} must be a UUID`);
    out[name] = result.data;
  }
  return out;
}

export function companyActor(actor: Actor): ScopedActor {
  if (actor.kind === 'admin') throw new AppError('forbidden', 'the admin token manages companies; use the company board token for this route');
  return actor;
}

export const titleSchema = safeString().trim().min(1, 'must not be empty').max(500);
export const issueStatusSchema = z.enum(ISSUE_STATUSES);
export const watchdogBodySchema = z
  .object({ agentId: uuidSchema, instructions: safeString().max(20_000).nullable().optional() })
  .strict();
