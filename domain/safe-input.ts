/**
 * The shared schemas for every string and JSON record a request may carry. PostgreSQL refuses NUL
 * in text and jsonb, a lone surrogate is silently stored as U+FFFD, and deeply nested JSON
 * overflows the stack of Prisma's serializer: each would be a 503 (or a changed value) after the
 * request was accepted. Here each is a 400 naming the field, before anything is read or written.
 */
import { z } from 'zod';

/** Deeper JSON than this is refused (a record is data, not a program). */
export const MAX_JSON_DEPTH = 64;
/** Serialized size cap of one JSON record. */
export const MAX_JSON_BYTES = 64 * 1024;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be stored, or null. */
export function stringProblem(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain NUL characters (\\u0000)';
  if (LONE_SURROGATE.test(value)) return 'must be well-formed UTF-16 (it contains a lone surrogate)';
  return null;
}

/** Every string field of every request: z.string() that refuses NUL and lone surrogates. */
export function safeString() {
  return z.string().superRefine((value, ctx) => {
    const problem = stringProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

type Path = (string | number)[];

/**
 * The first problem of a JSON value: a NUL or lone surrogate in a key or string, nesting deeper
 * than MAX_JSON_DEPTH. Iterative, so even a value nested thousands of levels deep is walked safely.
 */
export function jsonProblem(root: unknown): { path: Path; message: string } | null {
  const stack: { value: unknown; path: Path }[] = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem) return { path, message: problem };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (path.length >= MAX_JSON_DEPTH)
      return { path, message: `must not be nested deeper than ${MAX_JSON_DEPTH} levels` };
    const entries: [string | number, unknown][] = Array.isArray(value)
      ? value.map((v, i) => [i, v])
      : Object.entries(value);
    for (const [key, child] of entries) {
      if (typeof key === 'string') {
        const problem = stringProblem(key);
        // the path stops at the object: the bad key is not echoed back
        if (problem) return { path, message: `a key ${problem}` };
      }
      stack.push({ value: child, path: [...path, key] });
    }
  }
  return null;
}

/**
 * Every JSON record of every request (`context`, `resolution`, `details`): an object of safe JSON,
 * capped in depth and size.
 */
export function jsonRecord() {
  return z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    const problem = jsonProblem(value);
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path });
      return;
    }
    const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
    if (bytes > MAX_JSON_BYTES)
      ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_JSON_BYTES} bytes as JSON (it is ${bytes})` });
  });
}
