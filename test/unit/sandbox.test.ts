/** The sandbox's rules that need no namespace: what an agent is told, what it must not see, where its proxy goes. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { outsideAddress, ProxyRefusal } from '../../processes/sandbox-gate';
import {
  assertCanRunAgents,
  pathsToHide,
  sandboxedCommand,
  sandboxEnvironment,
  SandboxUnavailableError,
} from '../../processes/sandbox';
import { SecretFileError, withSecretFiles } from '../../runtime/secret-files';

describe('the proxy reaches the outside network, never this host', () => {
  const ownAddresses = Object.values(networkInterfaces())
    .flat()
    .map((i) => i!.address);
  test.each(['127.0.0.1', '127.8.9.10', 'localhost', '::1', '[::1]', '0.0.0.0', '169.254.169.254', ...ownAddresses])(
    '%s is refused',
    async (host) => {
      await expect(outsideAddress(host)).rejects.toThrow(ProxyRefusal);
    },
  );
  test('an IPv4-mapped loopback is refused too', async () => {
    await expect(outsideAddress('::ffff:127.0.0.1')).rejects.toThrow(ProxyRefusal);
  });
  test('an address elsewhere is let through as it is', async () => {
    await expect(outsideAddress('93.184.215.14')).resolves.toBe('93.184.215.14');
  });
});

test("an agent is told the API at its own loopback, at the worker's port, and the proxy for everything else", () => {
  expect(sandboxEnvironment('http://api.internal:8787')).toMatchObject({
    TREEWARDEN_API_URL: 'http://127.0.0.1:8787',
    HTTPS_PROXY: 'http://127.0.0.1:3128',
    https_proxy: 'http://127.0.0.1:3128',
    NO_PROXY: '127.0.0.1,localhost,::1',
  });
  expect(sandboxEnvironment('https://api.example/').TREEWARDEN_API_URL).toBe('https://127.0.0.1:443');
});

test('the data folder, the secrets read from files, Temporal configuration and the extra paths are hidden', () => {
  const hidden = pathsToHide(
    {
      DATABASE_URL_FILE: '/etc/tw/db',
      TEMPORAL_TLS_CLIENT_KEY_PATH: '/etc/tw/key.pem',
      TREEWARDEN_SANDBOX_HIDE: '/srv/a:/srv/b',
      SOME_OTHER_FILE: '/not/a/secret',
    },
    '/var/lib/tw',
  );
  expect(hidden).toEqual(
    expect.arrayContaining(['/var/lib/tw', '/etc/tw/db', '/etc/tw/key.pem', '/srv/a', '/srv/b', '/sys/fs/cgroup']),
  );
  expect(hidden).not.toContain('/not/a/secret');
});

test('a workspace inside a hidden path is refused, naming both', () => {
  const sandbox = { kind: 'namespaces' as const, hidden: ['/var/lib/tw'] };
  const place = { runDir: '/tmp/r', records: '/tmp/r/.supervisor', apiUrl: 'http://127.0.0.1:1', gateDir: '/tmp/g' };
  expect(() => sandboxedCommand(sandbox, { ...place, workspace: '/var/lib/tw/ws' }, 'sh', [])).toThrow(
    /the workspace \/var\/lib\/tw\/ws is inside \/var\/lib\/tw/,
  );
  expect(sandboxedCommand(sandbox, { ...place, workspace: '/srv/ws' }, 'sh', []).command).toBe('unshare');
});

test('agents are refused where the host cannot sandbox them, unless the risk was accepted', () => {
  expect(() => assertCanRunAgents({ kind: 'none', reason: 'no unshare', accepted: false })).toThrow(
    SandboxUnavailableError,
  );
  expect(() => assertCanRunAgents({ kind: 'none', reason: 'TREEWARDEN_SANDBOX=off', accepted: true })).not.toThrow();
});

describe('secrets read from <NAME>_FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tw-secret-files-'));
  test('a file is read, trimmed; a variable set itself wins', () => {
    writeFileSync(join(dir, 'db'), 'postgresql://u:p@h/d\n');
    expect(withSecretFiles({ DATABASE_URL_FILE: join(dir, 'db') }).DATABASE_URL).toBe('postgresql://u:p@h/d');
    expect(withSecretFiles({ DATABASE_URL_FILE: join(dir, 'db'), DATABASE_URL: 'x' }).DATABASE_URL).toBe('x');
  });
  test('a file that cannot be read is an error naming the variable', () => {
    expect(() => withSecretFiles({ TREEWARDEN_ADMIN_TOKEN_FILE: join(dir, 'missing') })).toThrow(SecretFileError);
    expect(() => withSecretFiles({ TREEWARDEN_ADMIN_TOKEN_FILE: join(dir, 'missing') })).toThrow(
      /TREEWARDEN_ADMIN_TOKEN_FILE=/,
    );
  });
});
