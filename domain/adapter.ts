import { z } from 'zod';

const commandSchema = z.string().min(1, 'must not be empty').max(4096);
const argsSchema = z.array(z.string().max(65536)).max(256).default([]);

/** How an agent executes. `process` runs a real local command; `prepare` readies its workspace first. */
export const adapterSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('process'),
    command: commandSchema,
    args: argsSchema,
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'invalid variable name'), z.string()).default({}),
    cwd: z.string().min(1).optional(),
    prepare: z.object({ command: commandSchema, args: argsSchema }).strict().optional(),
  }).strict(),
  z.object({ type: z.literal('noop') }).strict(),
]);

export type Adapter = z.infer<typeof adapterSchema>;
