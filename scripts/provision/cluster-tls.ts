/**
 * mTLS for the cluster profile (issue 28). A throwaway certificate authority, made with Debian's openssl: a CA, a
 * certificate for `localhost` / 127.0.0.1 that the frontend and the cluster's own nodes present (and show each other
 * as clients), and a client certificate for treewarden's processes and the server's system worker. Valid two days.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TLSConfig } from '@temporalio/client';

export interface TestCertificates {
  ca: string;
  server: { cert: string; key: string };
  client: { cert: string; key: string };
  /** the name the server certificate is valid for */
  serverName: string;
}

const SERVER_NAME = 'localhost';

export function makeTestCertificates(dir: string): TestCertificates {
  fs.mkdirSync(dir, { recursive: true });
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req', '-x509', ...newKey, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2',
    '-subj', '/CN=treewarden cluster-check CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ); // prettier-ignore
  const leaf = (name: string, subject: string, extensions: string) => {
    fs.writeFileSync(file(`${name}.ext`), extensions);
    openssl('req', ...newKey, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', subject);
    openssl(
      'x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.pem'), '-CAkey', file('ca.key'),
      '-CAcreateserial', '-days', '2', '-extfile', file(`${name}.ext`), '-out', file(`${name}.pem`),
    ); // prettier-ignore
    return { cert: file(`${name}.pem`), key: file(`${name}.key`) };
  };
  return {
    ca: file('ca.pem'),
    server: leaf(
      'server',
      `/CN=${SERVER_NAME}`,
      `subjectAltName=DNS:${SERVER_NAME},IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n`,
    ),
    client: leaf('client', '/CN=treewarden', 'extendedKeyUsage=clientAuth\n'),
    serverName: SERVER_NAME,
  };
}

/**
 * mTLS everywhere: the frontend accepts only clients with a certificate of the CA, the nodes show each other the
 * server certificate, and the server's own system worker (schedules, retention) connects to the frontend with the
 * client certificate.
 */
export function mutualTlsYaml(tls: TestCertificates): string {
  const server = `
        certFile: ${JSON.stringify(tls.server.cert)}
        keyFile: ${JSON.stringify(tls.server.key)}
        requireClientAuth: true
        clientCaFiles: [${JSON.stringify(tls.ca)}]`;
  const client = `
        serverName: ${tls.serverName}
        rootCaFiles: [${JSON.stringify(tls.ca)}]`;
  return `
  tls:
    internode:
      server:${server}
      client:${client}
    frontend:
      server:${server}
      client:${client}
    systemWorker:
      certFile: ${JSON.stringify(tls.client.cert)}
      keyFile: ${JSON.stringify(tls.client.key)}
      client:${client.replaceAll('\n        ', '\n          ')}`;
}

/** How a client of the check reaches a cluster that requires mTLS. */
export function clientTlsOf(tls: TestCertificates): TLSConfig {
  return {
    serverNameOverride: tls.serverName,
    serverRootCACertificate: fs.readFileSync(tls.ca),
    clientCertPair: { crt: fs.readFileSync(tls.client.cert), key: fs.readFileSync(tls.client.key) },
  };
}
