/**
 * Secrets read from files instead of the environment (the `<NAME>_FILE` convention of container images): a process's
 * environment is readable by every process of its user through `/proc/<pid>/environ`, a file can be `0600` in a
 * `0700` folder and hidden from agents' sandboxes (processes/sandbox.ts hides every `*_FILE` it is given).
 */
import { readFileSync } from 'node:fs';

export const SECRET_VARIABLES = ['DATABASE_URL', 'TREEWARDEN_ADMIN_TOKEN', 'TEMPORAL_API_KEY'] as const;

export class SecretFileError extends Error {
  override readonly name = 'SecretFileError';
}

/** `env` with each secret whose `<NAME>_FILE` is set read from that file (a variable set itself wins). */
export function withSecretFiles(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const read: Record<string, string> = {};
  for (const name of SECRET_VARIABLES) {
    const file = env[`${name}_FILE`];
    if (!file || env[name] !== undefined) continue;
    try {
      read[name] = readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new SecretFileError(`${name}_FILE=${file} cannot be read: ${(error as Error).message}`);
    }
  }
  return { ...env, ...read };
}
