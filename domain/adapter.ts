import { z } from 'zod';
import { ACP_MESSAGE_POLICIES } from './acp-activity';
import { safeString } from './safe-input';

const commandSchema = safeString().min(1, 'must not be empty').max(4096);
const argsSchema = z.array(safeString().max(65536)).max(256).default([]);

/** What a local command needs, for a `process` run and for the agent of an `acp` run. */
const localCommand = {
  command: commandSchema,
  args: argsSchema,
  env: z.record(safeString().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'invalid variable name'), safeString()).default({}),
  cwd: safeString().min(1).optional(),
};

/**
 * How an agent executes. `process` runs a real local command; `prepare` readies its workspace first. `acp` runs an
 * agent that speaks the Agent Client Protocol (Claude Code, Codex, Gemini: docs/run-supervision.md has the presets)
 * under treewarden's per-run ACP supervisor, in the same sandbox and cgroup as a `process` run.
 */
export const adapterSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('process'),
      ...localCommand,
      prepare: z.object({ command: commandSchema, args: argsSchema }).strict().optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('acp'),
      ...localCommand,
      // a person's message waits for the turn's end (after_turn) or cancels the turn and is the next prompt
      messages: z.enum(ACP_MESSAGE_POLICIES).default('after_turn'),
    })
    .strict(),
  z.object({ type: z.literal('noop') }).strict(),
]);

export type Adapter = z.infer<typeof adapterSchema>;
/** A stored adapter as it parses now; null when it no longer does (an older shape, a hand-edited row). */
export function adapterOf(stored: unknown): Adapter | null {
  const parsed = adapterSchema.safeParse(stored);
  return parsed.success ? parsed.data : null;
}

export type LocalAdapter = Extract<Adapter, { type: 'process' | 'acp' }>;

export interface CommandLine {
  command: string;
  args: string[];
}

/**
 * The command line a run starts: a `process` run's own; for an `acp` run, the supervisor's (`supervisor`), which
 * starts the agent's command as its child and speaks ACP to it.
 */
export function launchOf(adapter: LocalAdapter, supervisor: CommandLine): CommandLine {
  if (adapter.type === 'process') return { command: adapter.command, args: adapter.args };
  return { command: supervisor.command, args: [...supervisor.args, '--', adapter.command, ...adapter.args] };
}
