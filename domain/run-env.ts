/**
 * The environment a run (and every shell job or monitor it starts) is spawned with. Agents are
 * untrusted code: they get an allow-list, never the worker's environment, so the service's
 * secrets (admin token, database URL, Temporal credentials) stay out of reach.
 */

/** Passed from the worker's environment when set. */
export const BASE_RUN_ENV = ['PATH', 'HOME', 'LANG'] as const;

/**
 * Names that are the service's own secrets or settings and can never be passed through: every
 * TREEWARDEN_* (a run's TREEWARDEN_* values are its own, set per run), the database (DATABASE_URL,
 * libpq's PG* variables) and Temporal's (TEMPORAL_*, which carries TLS keys and API keys).
 */
export function isServiceSecret(name: string): boolean {
  return name === 'DATABASE_URL' || /^(TREEWARDEN_|TEMPORAL_|PG)/.test(name);
}

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export class RunEnvPassthroughError extends Error {
  override readonly name = 'RunEnvPassthroughError';
}

/** Parses TREEWARDEN_RUN_ENV_PASSTHROUGH (comma-separated names); a secret or malformed name is an error naming it. */
export function parsePassthrough(value: string | undefined): string[] {
  const names = (value ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  for (const name of names) {
    if (!VARIABLE_NAME.test(name)) throw new RunEnvPassthroughError(`${JSON.stringify(name)} is not a variable name`);
    if (isServiceSecret(name))
      throw new RunEnvPassthroughError(`${name} is a secret of the service and is never passed to runs`);
  }
  return [...new Set(names)];
}

/**
 * The allow-listed environment: PATH, HOME, LANG and the configured pass-through names from the
 * worker, then the adapter's `env`, then the run's own TREEWARDEN_* values (which nothing overrides).
 */
export function runEnvironment(
  workerEnv: Record<string, string | undefined>,
  passthrough: readonly string[],
  adapterEnv: Record<string, string>,
  runValues: Record<string, string>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...BASE_RUN_ENV, ...passthrough]) {
    const value = workerEnv[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...adapterEnv, ...runValues };
}
