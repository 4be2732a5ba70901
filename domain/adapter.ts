import { z } from 'zod';
import { safeString } from './safe-input';

const commandSchema = safeString().min(1, 'must not be empty').max(4096);
const argsSchema = z.array(safeString().max(65536)).max(256).default([]);

/** How an agent executes. `process` runs a real local command; `prepare` readies its workspace first. */
export const adapterSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('process'),
      command: commandSchema,
      args: argsSchema,
      env: z.record(safeString().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'invalid variable name'), safeString()).default({}),
      cwd: safeString().min(1).optional(),
      prepare: z.object({ command: commandSchema, args: argsSchema }).strict().optional(),
    })
    .strict(),
  z.object({ type: z.literal('noop') }).strict(),
]);

export type Adapter = z.infer<typeof adapterSchema>;
