/** @module The `acp` adapter's pure rules: its command line, and the first layer of its stop (domain/). */
import { ACP_SUPERVISOR_MARK, acpFirstLayerMs, FIRST_LAYER_MAX_MS, firstLayerOf } from '../../domain/acp-stop';
import { adapterOf, adapterSchema, launchOf } from '../../domain/adapter';

const supervisor = { command: '/usr/bin/node', args: ['--import', 'tsx', '/srv/treewarden/acp/supervisor.ts'] };

test('an acp run starts the supervisor with the agent command after --; a process run its own command', () => {
  const acp = adapterSchema.parse({ type: 'acp', command: 'claude-agent-acp', args: ['--verbose'] });
  expect(launchOf(acp as never, supervisor)).toEqual({
    command: '/usr/bin/node',
    args: ['--import', 'tsx', '/srv/treewarden/acp/supervisor.ts', '--', 'claude-agent-acp', '--verbose'],
  });
  const proc = adapterSchema.parse({ type: 'process', command: 'sh', args: ['-c', 'true'] });
  expect(launchOf(proc as never, supervisor)).toEqual({ command: 'sh', args: ['-c', 'true'] });
});

test('an acp adapter has no prepare step and refuses unknown fields', () => {
  expect(adapterSchema.safeParse({ type: 'acp', command: 'x', prepare: { command: 'y' } }).success).toBe(false);
  expect(adapterSchema.safeParse({ type: 'acp', command: '' }).success).toBe(false);
  expect(adapterOf({ type: 'acp', command: 'gemini', args: ['--experimental-acp'] })).toMatchObject({ type: 'acp' });
  expect(adapterOf({ type: 'acp' })).toBeNull();
});

test("an acp adapter's message policy: after_turn by default, interrupt when asked, nothing else", () => {
  expect(adapterSchema.parse({ type: 'acp', command: 'x' })).toMatchObject({ messages: 'after_turn' });
  expect(adapterSchema.parse({ type: 'acp', command: 'x', messages: 'interrupt' })).toMatchObject({
    messages: 'interrupt',
  });
  expect(adapterSchema.safeParse({ type: 'acp', command: 'x', messages: 'now' }).success).toBe(false);
  expect(adapterSchema.safeParse({ type: 'process', command: 'x', messages: 'interrupt' }).success).toBe(false);
});

test("only an acp run's stop has a first layer, bounded by the supervisor's own waits", () => {
  expect(firstLayerOf(null)).toBeNull();
  expect(firstLayerOf({ type: 'noop' })).toBeNull();
  expect(firstLayerOf({ type: 'process', command: 'sh', args: [], env: {} })).toBeNull();
  expect(firstLayerOf({ type: 'acp', command: 'a', args: [], env: {}, messages: 'after_turn' })).toEqual({
    mark: ACP_SUPERVISOR_MARK,
    withinMs: 10_000 + 3_000 + 5_000,
  });
  const env = { TREEWARDEN_ACP_CANCEL_WAIT_MS: '4000', TREEWARDEN_ACP_AGENT_GRACE_MS: '1000' };
  expect(acpFirstLayerMs(env)).toBe(4_000 + 1_000 + 5_000);
  // a value the supervisor refuses (it then exits at once) takes the default; a huge one is capped
  expect(acpFirstLayerMs({ TREEWARDEN_ACP_CANCEL_WAIT_MS: 'soon' })).toBe(18_000);
  expect(acpFirstLayerMs({ TREEWARDEN_ACP_CANCEL_WAIT_MS: '3600000' })).toBe(FIRST_LAYER_MAX_MS);
});
