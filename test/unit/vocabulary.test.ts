/**
 * @module Unit: status vocabularies (domain/statuses.ts), ids and workflow ids (domain/ids.ts) and
 * process configuration (domain/config.ts).
 */
import { ConfigError, parseConfig } from '../../domain/config';
import { uuidSchema, workflowId } from '../../domain/ids';
import {
  ACTIONABLE_ISSUE_STATUSES,
  AGENT_STATUSES,
  isInvokable,
  isTerminalRunStatus,
  ISSUE_STATUSES,
  LIVE_RUN_STATUSES,
  RUN_STATUSES,
  TERMINAL_ISSUE_STATUSES,
  type RunStatus,
} from '../../domain/statuses';

describe('statuses', () => {
  test('terminal and actionable issue statuses are disjoint subsets of the issue statuses', () => {
    for (const s of [...TERMINAL_ISSUE_STATUSES, ...ACTIONABLE_ISSUE_STATUSES]) expect(ISSUE_STATUSES).toContain(s);
    expect(TERMINAL_ISSUE_STATUSES.filter((s) => ACTIONABLE_ISSUE_STATUSES.includes(s))).toEqual([]);
    expect([...TERMINAL_ISSUE_STATUSES].sort()).toEqual(['cancelled', 'done']);
  });

  test('a release wakes only todo, in_progress and in_review: backlog and blocked issues wait for a person', () => {
    expect([...ACTIONABLE_ISSUE_STATUSES].sort()).toEqual(['in_progress', 'in_review', 'todo']);
  });

  test.each<[RunStatus, boolean]>([
    ['queued', false],
    ['running', false],
    ['scheduled_retry', false],
    ['succeeded', true],
    ['failed', true],
    ['cancelled', true],
    ['timed_out', true],
  ])('run status %s is terminal: %s', (status, terminal) => {
    expect(isTerminalRunStatus(status)).toBe(terminal);
    expect(LIVE_RUN_STATUSES.includes(status)).toBe(!terminal);
  });

  test('the table above covers every run status', () => {
    expect(RUN_STATUSES).toHaveLength(7);
  });

  test.each(AGENT_STATUSES.map((s) => [s, s === 'active'] as const))(
    'an agent %s is invokable: %s',
    (status, invokable) => {
      expect(isInvokable(status)).toBe(invokable);
    },
  );
});

describe('ids', () => {
  const ID = '0b6f4a52-9c1e-4d7a-8f3b-2e5d6c7a8b9c';

  test.each([
    ['taskWatchdog', workflowId.taskWatchdog, `task-watchdog:${ID}`],
    ['treeHold', workflowId.treeHold, `tree-hold:${ID}`],
    ['agentRun', workflowId.agentRun, `agent-run:${ID}`],
    ['backgroundJob', workflowId.backgroundJob, `background-job:${ID}`],
  ])('the %s workflow id says what it is about', (_kind, make, expected) => {
    expect(make(ID)).toBe(expected);
  });

  test('workflow ids of different kinds never collide for the same entity id (one namespace holds them all)', () => {
    const ids = Object.values(workflowId).map((make) => make(ID));
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('a UUID is accepted, in either case', () => {
    expect(uuidSchema.parse(ID)).toBe(ID);
    expect(uuidSchema.safeParse(ID.toUpperCase()).success).toBe(true);
  });

  test.each(['', 'not-a-uuid', `${ID}x`, ID.replace(/-/g, ''), `task-watchdog:${ID}`, ' '.repeat(36)])(
    '%j is a malformed id, named as such',
    (bad) => {
      const result = uuidSchema.safeParse(bad);
      expect(result.success).toBe(false);
      expect(result.error?.issues[0].message).toBe('must be a UUID');
    },
  );
});

describe('parseConfig', () => {
  const DATABASE_URL = 'postgresql://treewarden:secret@127.0.0.1:5432/treewarden';
  const parseError = (env: Record<string, string | undefined>): ConfigError => {
    try {
      parseConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) return error;
      throw error;
    }
    throw new Error('parseConfig accepted a bad configuration');
  };

  test('only DATABASE_URL is required; everything else has the documented default', () => {
    expect(parseConfig({ DATABASE_URL })).toEqual({
      DATABASE_URL,
      TREEWARDEN_TASK_QUEUE: 'treewarden',
      TREEWARDEN_API_PORT: 8787,
      TREEWARDEN_API_HOST: '127.0.0.1',
      TREEWARDEN_DATA_DIR: '.data',
      TREEWARDEN_WORKER_METRICS_PORT: 9464,
      TREEWARDEN_WORKER_METRICS_HOST: '127.0.0.1',
      TREEWARDEN_WATCHDOG_TICK_MS: 600_000,
      TREEWARDEN_WATCHDOG_DEBOUNCE_MS: 500,
      TREEWARDEN_FIRST_RUN_GRACE_MS: 15_000,
      TREEWARDEN_STOP_GRACE_MS: 5_000,
      TREEWARDEN_SHUTDOWN_GRACE_MS: 30_000,
      TREEWARDEN_SUPERVISE_EVERY_MS: 15_000,
      TREEWARDEN_RUN_OUTPUT_MAX_BYTES: 67_108_864,
      TREEWARDEN_SILENT_SUSPICIOUS_MS: 300_000,
      TREEWARDEN_SILENT_CRITICAL_MS: 900_000,
      TREEWARDEN_SILENT_CONTINUE_REARM_MS: 1_800_000,
      TREEWARDEN_DB_CONNECT_TIMEOUT_MS: 5_000,
      TREEWARDEN_DB_POOL_MAX: 20,
      TREEWARDEN_DB_QUERY_TIMEOUT_MS: 60_000,
      TREEWARDEN_HEARTBEAT_TIMEOUT_MS: 10_000,
      TREEWARDEN_HOLD_DISPATCH_RETRY_MS: 5_000,
      TREEWARDEN_LIVENESS_STALL_MS: 1_800_000,
      TREEWARDEN_LIVENESS_SCAN_MS: 300_000,
      TREEWARDEN_LIVENESS_MAX_PER_COMPANY: 10,
      TREEWARDEN_ADOPTION_WINDOW_MS: 300_000,
      TREEWARDEN_COMPANY_MAX_RUNNING_RUNS: 64,
      TREEWARDEN_COMPANY_MAX_RELEASE_FAN_OUTS: 4,
      TREEWARDEN_WORKER_MAX_ACTIVITIES: 100,
      TREEWARDEN_WORKER_MAX_AGENT_RUNS: 100,
      TREEWARDEN_WORKER_MAX_WORKFLOW_TASKS: 40,
      TREEWARDEN_HOLD_RESUME_RETRIES: 20,
      TREEWARDEN_ORPHAN_SWEEP_MS: 60_000,
      TREEWARDEN_FLEET_RECOVERY_EVERY_MS: 600_000,
      TREEWARDEN_CONTAINMENT: 'auto',
      TREEWARDEN_SANDBOX: 'on',
      TREEWARDEN_WORKER_VERSIONING: 'on',
      TREEWARDEN_DEPLOYMENT_NAME: 'treewarden',
      TREEWARDEN_RUN_ENV_PASSTHROUGH: [],
      TREEWARDEN_WEBHOOK_ALLOW_PRIVATE: false,
      TREEWARDEN_WEBHOOK_DISPATCH_RETRY_MS: 5_000,
      TREEWARDEN_CHANGE_DISPATCH_RETRY_MS: 5_000,
      TREEWARDEN_RETENTION_DAYS: 30,
      TREEWARDEN_WEBHOOK_GIVE_UP_MS: 86_400_000,
      TREEWARDEN_WEBHOOK_RETRY_INITIAL_MS: 10_000,
      TREEWARDEN_WEBHOOK_RETRY_MAX_MS: 3_600_000,
      TREEWARDEN_WEBHOOK_TIMEOUT_MS: 10_000,
      TEMPORAL_UI_URL: 'http://127.0.0.1:8233',
      LOG_LEVEL: 'info',
    });
  });

  test('numbers are read from their strings; both postgres URL schemes are accepted; unknown variables are ignored', () => {
    const config = parseConfig({
      DATABASE_URL: 'postgres://u@db/x',
      TREEWARDEN_API_PORT: '0',
      TREEWARDEN_FIRST_RUN_GRACE_MS: '2500',
      TREEWARDEN_ADMIN_TOKEN: 'a'.repeat(16),
      PATH: '/usr/bin',
    });
    expect(config).toMatchObject({
      DATABASE_URL: 'postgres://u@db/x',
      TREEWARDEN_API_PORT: 0,
      TREEWARDEN_FIRST_RUN_GRACE_MS: 2500,
      TREEWARDEN_ADMIN_TOKEN: 'a'.repeat(16),
    });
    expect(config).not.toHaveProperty('PATH');
  });

  test.each<[string, Record<string, string | undefined>]>([
    ['DATABASE_URL', { DATABASE_URL: undefined }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://u@db/x' }],
    ['DATABASE_URL', { DATABASE_URL: 'not a url' }],
    ['TREEWARDEN_API_PORT', { TREEWARDEN_API_PORT: '65536' }],
    ['TREEWARDEN_API_PORT', { TREEWARDEN_API_PORT: 'http' }],
    ['TREEWARDEN_WORKER_METRICS_PORT', { TREEWARDEN_WORKER_METRICS_PORT: '-1' }],
    ['TREEWARDEN_API_PORT', { TREEWARDEN_API_PORT: '' }],
    ['TREEWARDEN_WORKER_METRICS_PORT', { TREEWARDEN_WORKER_METRICS_PORT: ' ' }],
    ['TREEWARDEN_WATCHDOG_TICK_MS', { TREEWARDEN_WATCHDOG_TICK_MS: '0' }],
    ['TREEWARDEN_FIRST_RUN_GRACE_MS', { TREEWARDEN_FIRST_RUN_GRACE_MS: '1.5' }],
    ['TREEWARDEN_STOP_GRACE_MS', { TREEWARDEN_STOP_GRACE_MS: '-5000' }],
    ['TREEWARDEN_HEARTBEAT_TIMEOUT_MS', { TREEWARDEN_HEARTBEAT_TIMEOUT_MS: 'ten seconds' }],
    ['TREEWARDEN_API_URL', { TREEWARDEN_API_URL: 'localhost' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'verbose' }],
    // a version is `<deployment>.<build id>`: a dot in the deployment name would be ambiguous
    ['TREEWARDEN_DEPLOYMENT_NAME', { TREEWARDEN_DEPLOYMENT_NAME: 'tree.warden' }],
    ['TREEWARDEN_BUILD_ID', { TREEWARDEN_BUILD_ID: 'build 2' }],
    ['TREEWARDEN_WORKER_VERSIONING', { TREEWARDEN_WORKER_VERSIONING: 'yes' }],
    ['TREEWARDEN_RUN_ENV_PASSTHROUGH', { TREEWARDEN_RUN_ENV_PASSTHROUGH: 'TREEWARDEN_ADMIN_TOKEN' }],
  ])('a bad %s (%j) fails with a ConfigError naming it', (variable, env) => {
    const error = parseError({ DATABASE_URL, ...env });
    expect(error.name).toBe('ConfigError');
    expect(error.message).toMatch(new RegExp(`^invalid configuration: (.*; )?${variable}: `));
  });

  test('a short admin token is refused with the rule it breaks', () => {
    expect(parseError({ DATABASE_URL, TREEWARDEN_ADMIN_TOKEN: 'short' }).message).toContain(
      'TREEWARDEN_ADMIN_TOKEN: must be at least 16 characters',
    );
  });

  test('every bad variable is named in one error, so one restart fixes them all', () => {
    const { message } = parseError({ DATABASE_URL: 'nope', LOG_LEVEL: 'loud', TREEWARDEN_STOP_GRACE_MS: '0' });
    for (const variable of ['DATABASE_URL', 'LOG_LEVEL', 'TREEWARDEN_STOP_GRACE_MS'])
      expect(message).toContain(`${variable}: `);
  });
});
