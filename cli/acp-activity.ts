/** `treewarden inspect`'s lines for an `acp` run's activity: its tool calls, last message, permissions and usage. */
import type { AcpActivity } from '../client';

export function acpActivityLines(activity: AcpActivity | null | undefined): string[] {
  if (!activity) return [];
  const { usage } = activity;
  const used = [
    usage.tokens === null ? null : `${usage.tokens} tokens`,
    usage.cost ? `cost ${usage.cost.amount} ${usage.cost.currency}` : null,
    usage.context ? `context ${usage.context.used}/${usage.context.size}` : null,
  ].filter((u) => u !== null);
  return [
    ...activity.toolCalls.map((t) => `  tool call ${t.toolCallId}: ${t.status}${t.title ? ` — ${t.title}` : ''}`),
    ...activity.permissions.map(
      (p) =>
        `  permission ${p.toolCallId}${p.title ? ` (${p.title})` : ''}: ${p.decision}` +
        `${p.locations.length ? ` for ${p.locations.join(', ')}` : ''}: ${p.reason}`,
    ),
    ...(activity.lastMessage === null ? [] : [`  last message: ${activity.lastMessage}`]),
    ...(used.length ? [`  usage: ${used.join(', ')}`] : []),
  ];
}
