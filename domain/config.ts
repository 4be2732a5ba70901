/** Process configuration, validated once at start; a bad variable fails with its name. */
import { z } from 'zod';
import { hostIdSchema } from './host';
import { parsePassthrough, RunEnvPassthroughError } from './run-env';

const duration = z.coerce.number().int().positive();
const positiveCount = z.coerce.number().int().positive();
// an empty variable is a mistake, not port 0 (which asks for a free port)
const port = z
  .string()
  .regex(/^\d+$/, 'must be a port number, 0 for a free one')
  .transform(Number)
  .pipe(z.number().int().max(65535));

/** extra worker variables runs get; never a secret of the service (domain/run-env.ts) */
const passthrough = z
  .string()
  .optional()
  .transform((value, ctx) => {
    try {
      return parsePassthrough(value);
    } catch (error) {
      if (!(error instanceof RunEnvPassthroughError)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message });
      return z.NEVER;
    }
  });

const schema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }),
  // the Temporal address, namespace, TLS and API key are envconfig's (temporal/connection.ts)
  TREEWARDEN_TASK_QUEUE: z.string().min(1).default('treewarden'),
  /** whose /proc this worker sees; default: kernel boot id + PID namespace (processes/host-identity.ts) */
  TREEWARDEN_HOST_ID: hostIdSchema.optional(),
  TREEWARDEN_API_PORT: port.default(8787),
  TREEWARDEN_API_HOST: z.string().default('127.0.0.1'),
  TREEWARDEN_API_URL: z.url().optional(),
  /** the Temporal Web UI the console links workflow ids to */
  TEMPORAL_UI_URL: z.url().default('http://127.0.0.1:8233'),
  TREEWARDEN_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  TREEWARDEN_DATA_DIR: z.string().default('.data'),
  /** each worker serves /healthz and /metrics here; 0 = a free port (logged), for several workers on one host */
  TREEWARDEN_WORKER_METRICS_PORT: port.default(9464),
  TREEWARDEN_WORKER_METRICS_HOST: z.string().default('127.0.0.1'),
  TREEWARDEN_WATCHDOG_TICK_MS: duration.default(600_000),
  TREEWARDEN_WATCHDOG_DEBOUNCE_MS: duration.default(500),
  TREEWARDEN_FIRST_RUN_GRACE_MS: duration.default(15_000),
  TREEWARDEN_STOP_GRACE_MS: duration.default(5_000),
  TREEWARDEN_SHUTDOWN_GRACE_MS: duration.default(30_000),
  /** how often a running run renews its lease and is checked for silence */
  TREEWARDEN_SUPERVISE_EVERY_MS: duration.default(15_000),
  /** a run still running this long after it started is stopped (stop kind `max_duration`); unset: no limit */
  TREEWARDEN_RUN_MAX_MS: duration.optional(),
  /** a run's output.log past this keeps its newest half behind a marker line */
  TREEWARDEN_RUN_OUTPUT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(4096)
    .default(64 * 1024 * 1024),
  TREEWARDEN_SILENT_SUSPICIOUS_MS: duration.default(5 * 60_000),
  TREEWARDEN_SILENT_CRITICAL_MS: duration.default(15 * 60_000),
  TREEWARDEN_SILENT_CONTINUE_REARM_MS: duration.default(30 * 60_000),
  /** how soon an activity of a dead worker is retried elsewhere; activities heartbeat at a quarter of it */
  TREEWARDEN_HEARTBEAT_TIMEOUT_MS: duration.default(10_000),
  /**
   * how long a running agent whose worker let go (a deploy, a crash) waits for a worker of its host to adopt it;
   * after that its stop is pending and the host may be declared lost
   */
  TREEWARDEN_ADOPTION_WINDOW_MS: duration.default(5 * 60_000),
  /**
   * at most this many agent runs of one company run at once; a run over it stays queued (its state says it waits for
   * the company's cap) and starts when one of the company's runs settles. High enough that one company never notices:
   * it keeps a storm of one company's runs from taking every worker slot of the shared queue
   */
  TREEWARDEN_COMPANY_MAX_RUNNING_RUNS: positiveCount.default(64),
  /**
   * at most this many releases of one company fan out their resumes at once; the next waits (its hold's state says
   * so) and fans out when one finishes. Keeps one company's storm of releases from taking every worker slot
   */
  TREEWARDEN_COMPANY_MAX_RELEASE_FAN_OUTS: positiveCount.default(4),
  /** the short activities one worker runs at once on the shared queue (the SDK's activity slots, 100 by default) */
  TREEWARDEN_WORKER_MAX_ACTIVITIES: positiveCount.default(100),
  /** the agents one worker runs at once: each holds a slot of the agents' queue for its whole run */
  TREEWARDEN_WORKER_MAX_AGENT_RUNS: positiveCount.default(100),
  /** workflows one worker keeps cached (0: none, each task replays its history); unset, the SDK's heap-sized default */
  TREEWARDEN_WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).optional(),
  /** the workflow tasks one worker runs at once (the SDK's workflow task slots, 40 by default; at least 2) */
  TREEWARDEN_WORKER_MAX_WORKFLOW_TASKS: z.coerce.number().int().min(2).default(40),
  /** a release's resumes whose wakes failed are retried this often (backoff 1 s doubling to 5 min), then given up */
  TREEWARDEN_HOLD_RESUME_RETRIES: duration.default(20),
  /** a database connection (or a free pooled one) not had within this fails the call instead of hanging */
  TREEWARDEN_DB_CONNECT_TIMEOUT_MS: duration.default(5_000),
  /**
   * connections each process keeps to PostgreSQL. A worker's activities (agents' supervision, claims, releases,
   * settlements) share them: with node-postgres' 10, a soak of four companies timed out waiting for a free one
   */
  TREEWARDEN_DB_POOL_MAX: positiveCount.default(20),
  /**
   * a database statement still unanswered after this fails (server-side statement_timeout and a
   * client-side read timeout, which also ends a call to a database that stopped answering); above
   * the slowest legitimate statement, a 10,000-issue evaluation
   */
  TREEWARDEN_DB_QUERY_TIMEOUT_MS: duration.default(60_000),
  /** how often a worker looks for live processes of finished work on its host (also once at start) */
  TREEWARDEN_ORPHAN_SWEEP_MS: duration.default(60_000),
  /**
   * the fleet-wide recovery (every active watchdog's workflow, queued runs never started) is done by one starting
   * worker per this period, however many start in it (a rollout)
   */
  TREEWARDEN_FLEET_RECOVERY_EVERY_MS: duration.default(10 * 60_000),
  /**
   * `on`: every run and job in its own sandbox (processes/sandbox.ts); a host that cannot build one refuses agents.
   * `off`: agents run unconfined, as the service's user (docs/run-supervision.md, "What an agent can reach": the
   * risk accepted)
   */
  TREEWARDEN_SANDBOX: z.enum(['on', 'off']).default('on'),
  /** `auto`: a cgroup per run and job where the host has a writable hierarchy; `process-group`: never */
  TREEWARDEN_CONTAINMENT: z.enum(['auto', 'process-group']).default('auto'),
  /**
   * Worker Deployment Versioning (docs/fleet.md, "Versioned rollouts"): `on`, workers poll as a version of
   * TREEWARDEN_DEPLOYMENT_NAME and each execution runs on the build its type's behaviour says
   * (domain/versioning.ts); `off`, any worker serves any execution
   */
  TREEWARDEN_WORKER_VERSIONING: z.enum(['on', 'off']).default('on'),
  // a version is named `<deployment>.<build id>`: a dot in the deployment name would make it ambiguous
  TREEWARDEN_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be 1-100 letters, digits, - or _')
    .default('treewarden'),
  /** this worker's build; default: a hash of its workflow bundle, so the same code is the same build everywhere */
  TREEWARDEN_BUILD_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,200}$/, 'must be 1-200 letters, digits, ., - or _')
    .optional(),
  /** a pre-built workflow bundle (npm run build:workflows); without it the worker bundles at start */
  TREEWARDEN_WORKFLOW_BUNDLE: z.string().min(1).optional(),
  TREEWARDEN_RUN_ENV_PASSTHROUGH: passthrough,
  /** webhooks may reach loopback and private addresses (refused by default: SSRF) */
  TREEWARDEN_WEBHOOK_ALLOW_PRIVATE: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .default('false')
    .transform((v) => v === 'true'),
  /** one delivery attempt gives up after this */
  TREEWARDEN_WEBHOOK_TIMEOUT_MS: duration.default(10_000),
  /**
   * first retry of a failed delivery; doubling up to _RETRY_MAX_MS, until _GIVE_UP_MS after the first
   * attempt (then dead)
   */
  TREEWARDEN_WEBHOOK_RETRY_INITIAL_MS: duration.default(10_000),
  TREEWARDEN_WEBHOOK_RETRY_MAX_MS: duration.default(60 * 60_000),
  TREEWARDEN_WEBHOOK_GIVE_UP_MS: duration.default(24 * 60 * 60_000),
  /**
   * how soon a worker tries again to start recorded deliveries after a failed round (deliveries start at the
   * commit's NOTIFY, and at each start or reconnection of a worker's listener; nothing polls)
   */
  TREEWARDEN_WEBHOOK_DISPATCH_RETRY_MS: duration.default(5_000),
  /**
   * how soon a worker tries again to signal the watchdogs above recorded subtree changes after a failed round
   * (changes are signalled at the recording commit's NOTIFY, and at each start or reconnection; nothing polls)
   */
  TREEWARDEN_CHANGE_DISPATCH_RETRY_MS: duration.default(5_000),
  /**
   * how soon a worker tries again to start the workflows of holds owed one after a failed round (a pause's commit
   * announces its hold; rounds run at that NOTIFY, and at each start or reconnection; nothing polls)
   */
  TREEWARDEN_HOLD_DISPATCH_RETRY_MS: duration.default(5_000),
  /** the retention schedule deletes what finished more than this many days ago (retention/); 0 keeps only live state */
  TREEWARDEN_RETENTION_DAYS: z.coerce.number().int().min(0).default(30),
  /**
   * liveness recovery (docs/run-supervision.md, "Liveness recovery"): an agent-owned in_progress issue with no live
   * path for this long is stalled, and its assignee is woken once per stall
   */
  TREEWARDEN_LIVENESS_STALL_MS: duration.default(30 * 60_000),
  /**
   * how often the safety scan for stalled work runs (the `treewarden-liveness` schedule's interval, set when
   * created); recoveries come from the liveness watch, at the moment an issue stalls, and the scan catches what a
   * lost notice missed
   */
  TREEWARDEN_LIVENESS_SCAN_MS: duration.default(5 * 60_000),
  /** recoveries per company and pass: a thousand stalled issues are woken over passes, never at once */
  TREEWARDEN_LIVENESS_MAX_PER_COMPANY: z.coerce.number().int().min(1).max(1000).default(10),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = z.infer<typeof schema>;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
}

/** the treewarden API as this process's runs reach it */
export const apiUrlOf = (config: Pick<Config, 'TREEWARDEN_API_URL' | 'TREEWARDEN_API_PORT'>): string =>
  config.TREEWARDEN_API_URL ?? `http://127.0.0.1:${config.TREEWARDEN_API_PORT}`;
