/**
 * Where and how a process reaches Temporal. `@temporalio/envconfig`, the SDK's own loader, reads a profile of its
 * TOML file (TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml; TEMPORAL_PROFILE, else `default`) and
 * lays the standard variables over it (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS,
 * TEMPORAL_TLS_*, TEMPORAL_GRPC_META_*), so the worker, the API, the CLI and the cluster check connect exactly as the
 * `temporal` CLI does with the same settings.
 */
import { existsSync } from 'node:fs';
import { Connection } from '@temporalio/client';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';
import { loadClientConfigProfile, toClientOptions, type ClientConfigProfile } from '@temporalio/envconfig';

/** the embedded dev server `npm start` and the test stack start when no address is configured */
export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';
export const DEFAULT_TEMPORAL_NAMESPACE = 'default';

/** What both `Connection.connect` (client) and `NativeConnection.connect` (worker) take. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

export interface TemporalTarget {
  namespace: string;
  connection: TemporalConnectionOptions;
}

/** A Temporal connection setting that cannot work; the message names the variables to fix, never a secret. */
export class TemporalConfigError extends Error {
  override readonly name = 'TemporalConfigError';
}

const SETTINGS_HINT =
  'set by TEMPORAL_ADDRESS, TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_* or the profile ' +
  '(TEMPORAL_PROFILE) of the config file (TEMPORAL_CONFIG_FILE)';

/** The profile of the config file with the variables of `env` laid over it. */
function loadProfile(env: Record<string, string | undefined>): ClientConfigProfile {
  const variables = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  // envconfig skips a missing file silently: right for the default path, wrong for one an operator named
  const configFile = variables.TEMPORAL_CONFIG_FILE;
  if (configFile !== undefined && !existsSync(configFile))
    throw new TemporalConfigError(`TEMPORAL_CONFIG_FILE ${configFile} does not exist`);
  return settingsOf(() => loadClientConfigProfile({ overrideEnvVars: variables }));
}

/** The frontend TEMPORAL_ADDRESS or the profile names, if either does (`npm start` then starts no dev server). */
export const configuredTemporalAddress = (env: Record<string, string | undefined>): string | undefined =>
  loadProfile(env).address || undefined;

/** The profile and variables of `env`; defaults only where neither names an address or a namespace. */
export function loadTemporalTarget(env: Record<string, string | undefined>): TemporalTarget {
  const profile = loadProfile(env);
  const tls = profile.tls;
  // envconfig drops a certificate without its key (or a key without its certificate) without a word
  if (tls && !tls.disabled && Boolean(tls.clientCert) !== Boolean(tls.clientKey))
    throw new TemporalConfigError(
      'a Temporal client certificate needs its key: set both TEMPORAL_TLS_CLIENT_CERT_PATH (or _DATA) and ' +
        'TEMPORAL_TLS_CLIENT_KEY_PATH (or _DATA), or client_cert_* and client_key_* in the profile',
    );
  // reads the certificate and key files
  const loaded = settingsOf(() => toClientOptions(profile));
  const { address, tls: tlsConfig, apiKey } = loaded.connectionOptions;
  const metadata = profile.grpcMeta;
  return {
    namespace: loaded.namespace || DEFAULT_TEMPORAL_NAMESPACE,
    connection: {
      address: address || DEFAULT_TEMPORAL_ADDRESS,
      ...(tlsConfig !== undefined && tlsConfig !== null ? { tls: tlsConfig } : {}),
      ...(apiKey !== undefined ? { apiKey } : {}),
      ...(metadata !== undefined ? { metadata } : {}),
    },
  };
}

function settingsOf<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    throw new TemporalConfigError(
      `cannot load the Temporal connection settings (${SETTINGS_HINT}): ${messageOf(error)}`,
    );
  }
}

/** How a connection is described in logs and errors: never the API key or a certificate. */
export function describeTarget(target: TemporalTarget): string {
  const { address, tls, apiKey } = target.connection;
  const security = [tls ? (typeof tls === 'object' && tls.clientCertPair ? 'mTLS' : 'TLS') : 'plaintext'];
  if (apiKey) security.push('API key');
  return `${address} (namespace ${target.namespace}, ${security.join(' + ')})`;
}

/** A failed connect says where it tried, how, and which settings decide that. */
export function connectionFailure(target: TemporalTarget, error: unknown): TemporalConfigError {
  return new TemporalConfigError(
    `cannot reach Temporal at ${describeTarget(target)}: ${messageOf(error)}; the connection is ${SETTINGS_HINT}`,
  );
}

export async function connectClient(
  target: TemporalTarget,
  options: { connectTimeout?: number } = {},
): Promise<Connection> {
  return Connection.connect({ ...target.connection, ...options }).catch((error: unknown) => {
    throw connectionFailure(target, error);
  });
}

// not `instanceof Error`: errors from node:fs may come from another realm (jest's sandbox)
const messageOf = (error: unknown) =>
  typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
