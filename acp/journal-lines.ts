/**
 * The lines the supervisor appends to the run's journal (`TREEWARDEN_JOURNAL_FILE`): one JSON object per
 * `session/update` and per supervisor event, each at most `JOURNAL_LINE_MAX` characters (a long message keeps its
 * start, up to an excerpt), and the open tool calls: those whose last status is neither completed nor failed.
 */
import type { ContentBlock, SessionUpdate, ToolCallContent } from '@agentclientprotocol/sdk';

/** A line's bound: the recovery capsule keeps the last 300 characters of each journal line. */
export const JOURNAL_LINE_MAX = 600;
/** A text excerpt's bound inside a line. */
export const EXCERPT_MAX = 200;

/** Whitespace collapsed to single spaces, cut to `max` characters with an ellipsis. */
export function excerpt(text: string, max = EXCERPT_MAX): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

function blockText(block: ContentBlock | undefined): string | undefined {
  if (!block) return undefined;
  switch (block.type) {
    case 'text':
      return block.text;
    case 'resource_link':
      return `[resource_link ${block.uri}]`;
    case 'resource':
      return `[resource ${block.resource.uri}]`;
    default:
      return `[${block.type}]`;
  }
}

function toolContentText(content: readonly ToolCallContent[] | null | undefined): string | undefined {
  const texts = (content ?? []).map((c) => {
    if (c.type === 'content') return blockText(c.content);
    if (c.type === 'diff') return `[diff ${c.path}]`;
    return `[terminal ${c.terminalId}]`;
  });
  return texts.length > 0 ? texts.join(' ') : undefined;
}

/** The fields of one update worth a journal line; everything else stays in the agent's own history. */
export function updateFields(update: SessionUpdate): Record<string, unknown> {
  const kind = update.sessionUpdate;
  switch (update.sessionUpdate) {
    case 'user_message_chunk':
    case 'agent_message_chunk':
    case 'agent_thought_chunk':
      return { kind, text: blockText(update.content) };
    case 'tool_call':
      return {
        kind,
        toolCallId: update.toolCallId,
        status: update.status ?? 'pending',
        toolKind: update.kind,
        text: update.title,
      };
    case 'tool_call_update':
      return {
        kind,
        toolCallId: update.toolCallId,
        status: update.status ?? undefined,
        text: update.title ?? toolContentText(update.content),
      };
    case 'plan':
      return { kind, text: update.entries.map((e) => `[${e.status}] ${e.content}`).join('; ') };
    case 'current_mode_update':
      return { kind, text: update.currentModeId };
    case 'notice':
      return { kind, severity: update.severity, text: update.title };
    case 'compaction_update':
      return { kind, status: update.status, text: update.error ?? undefined };
    case 'usage_update':
      return { kind, used: update.used, size: update.size, cost: update.cost ?? undefined };
    default:
      return { kind };
  }
}

const shortened = (record: Record<string, unknown>, max: number): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(record).map(([k, v]) => [k, typeof v === 'string' && k !== 'at' ? excerpt(v, max) : v]),
  );

/**
 * One journal line (no newline) for `record`, stamped `at`, within `maxChars`: the text excerpt first, then every
 * string, is cut until it fits; what still does not fit keeps only its time and kind.
 */
export function journalLine(record: Record<string, unknown>, at: string, maxChars = JOURNAL_LINE_MAX): string {
  const stamped: Record<string, unknown> = { at, source: 'acp', ...record };
  for (const limit of [Number.POSITIVE_INFINITY, EXCERPT_MAX, 60, 16]) {
    const line = JSON.stringify(
      limit === Number.POSITIVE_INFINITY
        ? { ...stamped, ...(typeof stamped.text === 'string' ? { text: excerpt(stamped.text) } : {}) }
        : shortened(stamped, limit),
    );
    if (line.length <= maxChars) return line;
  }
  return JSON.stringify({ at, source: 'acp', kind: excerpt(String(record.kind), 40), truncated: true });
}

const SETTLED = new Set(['completed', 'failed']);

/** The tool calls of a turn, by id, with their last status. */
export class ToolCalls {
  private readonly status = new Map<string, string>();

  observe(update: SessionUpdate): void {
    if (update.sessionUpdate === 'tool_call') this.status.set(update.toolCallId, update.status ?? 'pending');
    else if (update.sessionUpdate === 'tool_call_update') {
      // an update of a call never announced is tracked too: its outcome is as unknown as any other's
      const last = this.status.get(update.toolCallId) ?? 'pending';
      this.status.set(update.toolCallId, update.status ?? last);
    }
  }

  /** ids of the calls whose last status is neither completed nor failed, in the order they were first seen */
  open(): string[] {
    return [...this.status].filter(([, s]) => !SETTLED.has(s)).map(([id]) => id);
  }
}
