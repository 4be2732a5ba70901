/**
 * @module Unit: the ACP supervisor's journal lines (acp/journal-lines.ts): one bounded JSON line per update, and
 * the tool calls still open (last status neither completed nor failed).
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { excerpt, JOURNAL_LINE_MAX, journalLine, ToolCalls, updateFields } from '../../acp/journal-lines';

const AT = '2026-12-07T10:00:00.000Z';

test.each<[string, SessionUpdate, Record<string, unknown>]>([
  [
    'a message chunk',
    { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hello' } },
    { kind: 'agent_message_chunk', text: 'hello' },
  ],
  [
    'an image chunk',
    { sessionUpdate: 'user_message_chunk', content: { type: 'image', data: 'AAAA', mimeType: 'image/png' } },
    { kind: 'user_message_chunk', text: '[image]' },
  ],
  [
    'a plan',
    {
      sessionUpdate: 'plan',
      entries: [
        { content: 'read', priority: 'high', status: 'completed' },
        { content: 'write', priority: 'low', status: 'pending' },
      ],
    },
    { kind: 'plan', text: '[completed] read; [pending] write' },
  ],
  [
    'a tool call (pending when no status is given)',
    { sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Edit a.ts', kind: 'edit' },
    { kind: 'tool_call', toolCallId: 't1', status: 'pending', toolKind: 'edit', text: 'Edit a.ts' },
  ],
  [
    'a tool call update with content',
    {
      sessionUpdate: 'tool_call_update',
      toolCallId: 't1',
      status: 'completed',
      content: [
        { type: 'content', content: { type: 'text', text: 'ok' } },
        { type: 'diff', path: '/ws/a.ts', newText: 'x' },
      ],
    },
    { kind: 'tool_call_update', toolCallId: 't1', status: 'completed', text: 'ok [diff /ws/a.ts]' },
  ],
  [
    'a usage update',
    { sessionUpdate: 'usage_update', used: 10, size: 100, cost: { amount: 0.5, currency: 'USD' } },
    { kind: 'usage_update', used: 10, size: 100, cost: { amount: 0.5, currency: 'USD' } },
  ],
  [
    'an update with nothing to excerpt',
    { sessionUpdate: 'available_commands_update', availableCommands: [] },
    {
      kind: 'available_commands_update',
    },
  ],
])('updateFields: %s', (_case, update, expected) => {
  expect(JSON.parse(JSON.stringify(updateFields(update)))).toEqual(expected);
});

test('excerpt flattens whitespace and cuts with an ellipsis', () => {
  expect(excerpt('a\n\n  b\tc')).toBe('a b c');
  expect(excerpt('x'.repeat(300), 10)).toBe(`${'x'.repeat(9)}…`);
});

test('a line is stamped, and a long text is cut to its excerpt', () => {
  const line = journalLine({ kind: 'agent_message_chunk', text: 'y'.repeat(5_000) }, AT);
  const parsed = JSON.parse(line);
  expect(parsed).toMatchObject({ at: AT, source: 'acp', kind: 'agent_message_chunk' });
  expect(parsed.text).toHaveLength(200);
  expect(line.length).toBeLessThanOrEqual(JOURNAL_LINE_MAX);
});

test('long strings in every field are cut until the line fits; the time stays whole', () => {
  const record = { kind: 'tool_call', toolCallId: 'i'.repeat(2_000), text: 't'.repeat(2_000), path: 'p'.repeat(900) };
  const line = journalLine(record, AT);
  expect(line.length).toBeLessThanOrEqual(JOURNAL_LINE_MAX);
  expect(JSON.parse(line)).toMatchObject({ at: AT, kind: 'tool_call' });
});

test('what cannot be cut to fit keeps only its time and kind', () => {
  const record = { kind: 'x', list: Array.from({ length: 500 }, (_, i) => i) };
  expect(JSON.parse(journalLine(record, AT))).toEqual({ at: AT, source: 'acp', kind: 'x', truncated: true });
});

test('tool calls: open until their last status is completed or failed', () => {
  const calls = new ToolCalls();
  calls.observe({ sessionUpdate: 'tool_call', toolCallId: 'a', title: 'A' });
  calls.observe({ sessionUpdate: 'tool_call', toolCallId: 'b', title: 'B', status: 'in_progress' });
  calls.observe({ sessionUpdate: 'tool_call', toolCallId: 'c', title: 'C', status: 'completed' });
  expect(calls.open()).toEqual(['a', 'b']);
  calls.observe({ sessionUpdate: 'tool_call_update', toolCallId: 'a', status: 'failed' });
  calls.observe({ sessionUpdate: 'tool_call_update', toolCallId: 'b', title: 'renamed' }); // no status: unchanged
  expect(calls.open()).toEqual(['b']);
  calls.observe({ sessionUpdate: 'tool_call_update', toolCallId: 'b', status: 'completed' });
  expect(calls.open()).toEqual([]);
});

test('an update of a call never announced is tracked as open until it settles', () => {
  const calls = new ToolCalls();
  calls.observe({ sessionUpdate: 'tool_call_update', toolCallId: 'ghost' });
  expect(calls.open()).toEqual(['ghost']);
  calls.observe({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x' } });
  expect(calls.open()).toEqual(['ghost']);
});
