/**
 * @module Unit: the Temporal CLI's install order (scripts/provision/temporal-cli.ts, issue 45): the SDK's download
 * first, bounded so that an unreachable download host turns into the go install fallback in seconds, and a log line
 * that says which path was taken and why. No network: local HTTP servers stand in for the download host, fakes for
 * the SDK's download and for go.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { installTemporalCli, TEMPORAL_CLI_VERSION, type CliSources } from '../../scripts/provision/temporal-cli';
import { probeDownload, sdkDownload, sdkDownloadInfoUrl } from '../../scripts/provision/temporal-cli-download';

/** A shell script that answers `--version` as the CLI of `version` does. */
function fakeCli(file: string, version: string): string {
  fs.writeFileSync(file, `#!/bin/sh\necho "temporal version ${version} (Server 1.29.1, UI 2.42.1)"\n`, { mode: 0o755 });
  return file;
}

/** A local HTTP server; `handler` undefined accepts requests and never answers them. */
async function server(handler?: http.RequestListener): Promise<{ base: string; close: () => Promise<void> }> {
  const srv = http.createServer(handler ?? (() => undefined));
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    close: () => {
      srv.closeAllConnections();
      return new Promise<void>((resolve) => srv.close(() => resolve()));
    },
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<string> {
  const s = await server();
  await s.close();
  return s.base;
}

const PROXY_VARS = ['HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy'];
let savedProxies: Record<string, string | undefined>;
let dir: string;
let bin: string;
let lines: string[];
const log = (line: string) => lines.push(line);

beforeEach(() => {
  // the probe is skipped when a proxy is set (the SDK would then be tried for real)
  savedProxies = Object.fromEntries(PROXY_VARS.map((name) => [name, process.env[name]]));
  for (const name of PROXY_VARS) delete process.env[name];
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tw-cli-'));
  bin = path.join(dir, 'temporal');
  lines = [];
});

afterEach(() => {
  for (const [name, value] of Object.entries(savedProxies)) if (value !== undefined) process.env[name] = value;
  fs.rmSync(dir, { recursive: true, force: true });
});

const GO = '/usr/bin/go';

/** Sources whose go install writes a fake 1.5.1 CLI to `bin`; `goInstalls` counts the calls. */
function sources(download: CliSources['download'], go: string | undefined) {
  const calls = { goInstalls: 0 };
  const s: CliSources = {
    download,
    findGo: () => go,
    goInstall: (_go, _dir, target) => {
      calls.goInstalls++;
      fakeCli(target, TEMPORAL_CLI_VERSION);
      return Promise.resolve();
    },
  };
  return { sources: s, calls };
}

describe('the SDK download URL and its probe', () => {
  test('the URL is the one sdk-core asks first for a fixed version', () => {
    expect(sdkDownloadInfoUrl('v1.5.1', 'linux', 'x64')).toBe(
      'https://temporal.download/cli/v1.5.1?arch=amd64&platform=linux&format=tar.gz',
    );
    expect(sdkDownloadInfoUrl('v1.5.1', 'darwin', 'arm64')).toBe(
      'https://temporal.download/cli/v1.5.1?arch=arm64&platform=darwin&format=tar.gz',
    );
  });

  test('a host that accepts the connection and never answers fails the probe at its timeout', async () => {
    const silent = await server();
    try {
      const started = Date.now();
      await expect(probeDownload(`${silent.base}/cli/v1.5.1`, 300)).rejects.toThrow(
        /^127\.0\.0\.1:\d+ did not answer within 0\.3 s$/,
      );
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await silent.close();
    }
  });

  test('a host that refuses the connection fails the probe at once, with the socket error', async () => {
    const base = await closedPort();
    await expect(probeDownload(`${base}/cli/v1.5.1`, 10_000)).rejects.toThrow(
      /^cannot reach 127\.0\.0\.1:\d+ \(.*ECONNREFUSED.*\)$/,
    );
  });

  test('the probe follows the answer to the archive, and fails when the archive is missing', async () => {
    let archiveStatus = 200;
    const host = await server((req, res) => {
      if (req.url?.startsWith('/cli/')) {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ archiveUrl: `${host.base}/archive.tar.gz`, fileToExtract: 'temporal' }));
      } else {
        res.statusCode = archiveStatus;
        res.end('x'.repeat(1024));
      }
    });
    try {
      await expect(probeDownload(`${host.base}/cli/v1.5.1`, 5_000)).resolves.toBe(`${host.base}/archive.tar.gz`);
      archiveStatus = 404;
      await expect(probeDownload(`${host.base}/cli/v1.5.1`, 5_000)).rejects.toThrow(
        /archive\.tar\.gz answered 404 Not Found/,
      );
    } finally {
      await host.close();
    }
  });
});

describe('installTemporalCli: the download first, go install as the fallback', () => {
  test('an unreachable download host turns into go install within the probe timeout, and the log says why', async () => {
    const silent = await server();
    try {
      const { sources: s, calls } = sources(
        (d, l) =>
          sdkDownload(d, `v${TEMPORAL_CLI_VERSION}`, l, {
            probeMs: 300,
            deadlineMs: 60_000,
            infoUrl: `${silent.base}/cli/v${TEMPORAL_CLI_VERSION}`,
          }),
        GO,
      );
      const started = Date.now();
      await expect(installTemporalCli(dir, bin, log, s)).resolves.toBe('go install');
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(calls.goInstalls).toBe(1);
      expect(lines).toContainEqual(
        expect.stringMatching(
          /^the Temporal SDK's download of the CLI failed \(127\.0\.0\.1:\d+ did not answer within 0\.3 s, [\d.]+ s\); building it with go install \(5-10 min on 2 cores\)$/,
        ),
      );
      expect(lines).toContainEqual(
        expect.stringMatching(/^built the Temporal CLI 1\.5\.1 with go install \([\d.]+ s\)$/),
      );
      expect(fs.existsSync(bin)).toBe(true);
    } finally {
      await silent.close();
    }
  });

  test('a download that works is used, go is not run, and the log names the host and the time', async () => {
    const downloaded = fakeCli(path.join(dir, 'temporal-v1.5.1'), TEMPORAL_CLI_VERSION);
    const { sources: s, calls } = sources(() => Promise.resolve({ file: downloaded, from: 'temporal.download' }), GO);
    await expect(installTemporalCli(dir, bin, log, s)).resolves.toBe('download');
    expect(calls.goInstalls).toBe(0);
    expect(lines).toEqual([
      expect.stringMatching(/^downloaded the Temporal CLI 1\.5\.1 from temporal\.download \([\d.]+ s\)$/),
    ]);
    expect(fs.statSync(bin).mode & 0o111).not.toBe(0);
    expect(fs.readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  test('a downloaded binary of another version is not installed: it is dropped and go install runs', async () => {
    const downloaded = fakeCli(path.join(dir, 'temporal-v1.5.1'), '1.4.0');
    const { sources: s, calls } = sources(() => Promise.resolve({ file: downloaded, from: 'temporal.download' }), GO);
    await expect(installTemporalCli(dir, bin, log, s)).resolves.toBe('go install');
    expect(calls.goInstalls).toBe(1);
    expect(lines[0]).toMatch(/failed \(the downloaded .* does not say 'temporal version 1\.5\.1', [\d.]+ s\)/);
    expect(fs.existsSync(downloaded)).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  test('with neither the download nor go, the error names both', async () => {
    const { sources: s } = sources(
      () => Promise.reject(new Error('cannot reach temporal.download (ENOTFOUND)')),
      undefined,
    );
    await expect(installTemporalCli(dir, bin, log, s)).rejects.toThrow(
      /the Temporal SDK's download failed \(cannot reach temporal\.download \(ENOTFOUND\), [\d.]+ s\), and 'go' is not on PATH/,
    );
    expect(fs.existsSync(bin)).toBe(false);
  });

  test('a failed go install after a failed download names both failures', async () => {
    const s: CliSources = {
      download: () => Promise.reject(new Error('cannot reach temporal.download (ENOTFOUND)')),
      findGo: () => GO,
      goInstall: () => Promise.reject(new Error('go install of temporal CLI 1.5.1 failed (exit 1)')),
    };
    await expect(installTemporalCli(dir, bin, log, s)).rejects.toThrow(
      /download failed \(cannot reach temporal\.download \(ENOTFOUND\), [\d.]+ s\), and so did the go install fallback: go install of temporal CLI 1\.5\.1 failed \(exit 1\)/,
    );
  });
});
