/**
 * @module Unit: the allow-listed run environment (domain/run-env.ts) and its configuration: a
 * pass-through list naming a secret of the service fails at start with the variable named.
 */
import { ConfigError, parseConfig } from '../../domain/config';
import { runEnvironment } from '../../domain/run-env';

const BASE = { DATABASE_URL: 'postgresql://u:p@db:5432/tw' };

test('a run gets PATH, HOME, LANG, the pass-through names, the adapter env and its own values, nothing else', () => {
  const worker = {
    PATH: '/bin',
    HOME: '/home/w',
    LANG: 'C.UTF-8',
    EXTRA: 'yes',
    UNLISTED: 'no',
    DATABASE_URL: 'secret',
    TREEWARDEN_ADMIN_TOKEN: 'secret',
  };
  const env = runEnvironment(
    worker,
    ['EXTRA', 'MISSING'],
    { TOOL: 'x', TREEWARDEN_RUN_ID: 'forged' },
    { TREEWARDEN_RUN_ID: 'r1' },
  );
  expect(env).toEqual({
    PATH: '/bin',
    HOME: '/home/w',
    LANG: 'C.UTF-8',
    EXTRA: 'yes',
    TOOL: 'x',
    TREEWARDEN_RUN_ID: 'r1',
  });
});

test.each(['TREEWARDEN_ADMIN_TOKEN', 'DATABASE_URL', 'PGPASSWORD', 'TEMPORAL_TLS_KEY', 'TREEWARDEN_TOKEN'])(
  'TREEWARDEN_RUN_ENV_PASSTHROUGH naming %s fails at config time, naming both variables',
  (secret) => {
    const parse = () => parseConfig({ ...BASE, TREEWARDEN_RUN_ENV_PASSTHROUGH: `GIT_AUTHOR_NAME, ${secret}` });
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(new RegExp(`TREEWARDEN_RUN_ENV_PASSTHROUGH: ${secret} is a secret of the service`));
  },
);

test('a malformed name fails; a good list is parsed, trimmed and deduplicated', () => {
  expect(() => parseConfig({ ...BASE, TREEWARDEN_RUN_ENV_PASSTHROUGH: 'A-B' })).toThrow(
    /TREEWARDEN_RUN_ENV_PASSTHROUGH: "A-B" is not a variable name/,
  );
  expect(
    parseConfig({ ...BASE, TREEWARDEN_RUN_ENV_PASSTHROUGH: ' GIT_AUTHOR_NAME ,SSH_AUTH_SOCK,,GIT_AUTHOR_NAME' })
      .TREEWARDEN_RUN_ENV_PASSTHROUGH,
  ).toEqual(['GIT_AUTHOR_NAME', 'SSH_AUTH_SOCK']);
  expect(parseConfig(BASE).TREEWARDEN_RUN_ENV_PASSTHROUGH).toEqual([]);
});

test('no Temporal connection setting reaches a run, whether a variable or the config file naming a profile', () => {
  const temporal = {
    TEMPORAL_ADDRESS: 'temporal:7233',
    TEMPORAL_NAMESPACE: 'prod',
    TEMPORAL_API_KEY: 'secret',
    TEMPORAL_TLS: 'true',
    TEMPORAL_TLS_CLIENT_CERT_PATH: '/etc/tw/client.pem',
    TEMPORAL_TLS_CLIENT_CERT_DATA: 'CERT',
    TEMPORAL_TLS_CLIENT_KEY_PATH: '/etc/tw/client.key',
    TEMPORAL_TLS_CLIENT_KEY_DATA: 'KEY',
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/etc/tw/ca.pem',
    TEMPORAL_TLS_SERVER_CA_CERT_DATA: 'CA',
    TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true',
    TEMPORAL_CONFIG_FILE: '/etc/tw/temporal.toml',
    TEMPORAL_PROFILE: 'prod',
    TEMPORAL_GRPC_META_AUTHORIZATION: 'Bearer secret',
    TEMPORAL_CODEC_AUTH: 'secret',
  };
  expect(runEnvironment({ PATH: '/bin', ...temporal }, [], {}, {})).toEqual({ PATH: '/bin' });
  for (const name of Object.keys(temporal))
    expect(() => parseConfig({ ...BASE, TREEWARDEN_RUN_ENV_PASSTHROUGH: name })).toThrow(
      `${name} is a secret of the service`,
    );
});
