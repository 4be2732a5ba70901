/**
 * @module Unit: the Temporal connection settings (temporal/connection.ts) come from @temporalio/envconfig: a profile of
 * its TOML file, the standard variables over it, the dev server's address and `default` when neither names one, and a
 * setting that cannot work refused with the variables to fix, never with a secret.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  configuredTemporalAddress,
  describeTarget,
  loadTemporalTarget,
  TemporalConfigError,
} from '../../temporal/connection';

const dir = mkdtempSync(path.join(tmpdir(), 'treewarden-envconfig-'));
const configFile = path.join(dir, 'temporal.toml');
writeFileSync(
  configFile,
  [
    '[profile.default]',
    'address = "default.example:7233"',
    '[profile.prod]',
    'address = "prod.example:7233"',
    'namespace = "prod-ns"',
    'api_key = "secret-key-from-profile"',
    '[profile.prod.grpc_meta]',
    'x-team = "ops"',
  ].join('\n'),
);

test('without settings: the embedded dev server and the default namespace, plaintext', () => {
  expect(loadTemporalTarget({})).toEqual({ namespace: 'default', connection: { address: '127.0.0.1:7233' } });
});

test('the default profile, a named profile, and variables over the profile', () => {
  expect(loadTemporalTarget({ TEMPORAL_CONFIG_FILE: configFile }).connection.address).toBe('default.example:7233');
  const prod = loadTemporalTarget({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'prod' });
  // an API key turns TLS on by itself, as Temporal Cloud needs
  expect(prod).toEqual({
    namespace: 'prod-ns',
    connection: {
      address: 'prod.example:7233',
      apiKey: 'secret-key-from-profile',
      tls: true,
      metadata: { 'x-team': 'ops' },
    },
  });
  const overridden = loadTemporalTarget({
    TEMPORAL_CONFIG_FILE: configFile,
    TEMPORAL_PROFILE: 'prod',
    TEMPORAL_ADDRESS: '10.0.0.1:7233',
    TEMPORAL_NAMESPACE: 'other',
    TEMPORAL_TLS: 'false',
  });
  expect(overridden.connection).toMatchObject({ address: '10.0.0.1:7233', tls: false });
  expect(overridden.namespace).toBe('other');
});

test('npm start starts a dev server only when neither a variable nor the profile names a server', () => {
  expect(configuredTemporalAddress({})).toBeUndefined();
  expect(configuredTemporalAddress({ TEMPORAL_ADDRESS: 'temporal:7233' })).toBe('temporal:7233');
  expect(configuredTemporalAddress({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'prod' })).toBe(
    'prod.example:7233',
  );
});

test('the log line says where and how, never the API key', () => {
  const prod = loadTemporalTarget({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'prod' });
  expect(describeTarget(prod)).toBe('prod.example:7233 (namespace prod-ns, TLS + API key)');
  expect(describeTarget(loadTemporalTarget({}))).toBe('127.0.0.1:7233 (namespace default, plaintext)');
});

test('client certificate files are read into an mTLS configuration', () => {
  writeFileSync(path.join(dir, 'client.pem'), 'CERT');
  writeFileSync(path.join(dir, 'client.key'), 'KEY');
  const target = loadTemporalTarget({
    TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'client.pem'),
    TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'client.key'),
    TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
  });
  expect(target.connection.tls).toMatchObject({
    serverNameOverride: 'temporal.internal',
    clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') },
  });
  expect(describeTarget(target)).toBe('127.0.0.1:7233 (namespace default, mTLS)');
});

test.each([
  [{ TEMPORAL_CONFIG_FILE: path.join(dir, 'missing.toml') }, /TEMPORAL_CONFIG_FILE .*missing.toml does not exist/],
  [{ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'staging' }, /Profile 'staging' not found.*|TEMPORAL_PROFILE/],
  [
    { TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'client.pem') },
    /certificate needs its key.*TEMPORAL_TLS_CLIENT_KEY_PATH/,
  ],
  [
    {
      TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'nope.pem'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'nope.key'),
    },
    /cannot load the Temporal connection settings \(set by .*TEMPORAL_TLS_\*.*\): ENOENT.*nope.pem/,
  ],
])('a setting that cannot work is refused, naming what to fix: %j', (env, message) => {
  expect(() => loadTemporalTarget(env)).toThrow(TemporalConfigError);
  expect(() => loadTemporalTarget(env)).toThrow(message);
});
