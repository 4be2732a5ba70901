/**
 * A worker's gate for the sandboxes of its host (processes/sandbox.ts): two Unix sockets in the gate folder, which
 * every sandbox sees read-only. `api-<pid>.sock` relays to the treewarden API and nothing else; `proxy-<pid>.sock`
 * is an HTTP proxy (CONNECT and plain requests) to the outside network that refuses this host itself (loopback, its
 * own addresses, link-local), so an agent reaches its model's API but no internal port. Every worker of a host
 * serves one pair: a sandbox uses any live one, so a run adopted after its worker left keeps both.
 */
import { lookup } from 'node:dns/promises';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { BlockList, connect, createServer, isIP, type Server, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { apiPortOf } from './sandbox';

export interface SandboxGate {
  close(): Promise<void>;
}

/** `apiUrl` is read per connection: the API's address may be known only once it listens. */
export async function startSandboxGate(gateDir: string, apiUrl: () => string): Promise<SandboxGate> {
  mkdirSync(gateDir, { recursive: true, mode: 0o755 });
  await removeStaleSockets(gateDir);
  const apiServer = createServer((client) => {
    const api = new URL(apiUrl());
    pipeTo(client, apiPortOf(api), api.hostname);
  });
  const proxyServer = proxy();
  const servers: Server[] = [apiServer, proxyServer];
  const sockets = [join(gateDir, `api-${process.pid}.sock`), join(gateDir, `proxy-${process.pid}.sock`)];
  // the connections open through this gate, cut when it closes: an agent's keep-alive connection to the API (its
  // supervisor's reports) would otherwise hold a draining worker past its grace; the agent's next request goes
  // through another worker's gate
  const open = new Set<Socket>();
  for (const server of servers)
    server.on('connection', (socket: Socket) => {
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    });
  await Promise.all(servers.map((server, i) => listen(server, sockets[i])));
  return {
    close: async () => {
      const closed = Promise.all(servers.map((server) => new Promise((done) => server.close(done))));
      for (const socket of open) socket.destroy();
      await closed;
      for (const socket of sockets) rmSync(socket, { force: true });
    },
  };
}

function listen(server: Server, socket: string): Promise<void> {
  rmSync(socket, { force: true });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
}

/** Sockets whose worker died (SIGKILL) refuse connections: removed, so sandboxes do not try them first. */
async function removeStaleSockets(gateDir: string): Promise<void> {
  const names = readdirSync(gateDir).filter((name) => name.endsWith('.sock'));
  await Promise.all(
    names.map(
      (name) =>
        new Promise<void>((done) => {
          const socket = connect(join(gateDir, name));
          socket.once('connect', () => (socket.destroy(), done()));
          socket.once('error', () => (rmSync(join(gateDir, name), { force: true }), done()));
        }),
    ),
  );
}

function pipeTo(client: Duplex, port: number, host: string): Socket {
  const upstream = connect(port, host);
  const close = () => (client.destroy(), upstream.destroy());
  upstream.once('error', close);
  client.once('error', close);
  // either end gone ends the other: a client cut by the gate's close leaves no upstream holding the worker alive
  upstream.once('close', close);
  client.once('close', close);
  client.pipe(upstream).pipe(client);
  return upstream;
}

/** This host's own addresses: what the proxy never connects to. Read per request (interfaces come and go). */
function thisHost(): BlockList {
  const blocked = new BlockList();
  blocked.addSubnet('127.0.0.0', 8, 'ipv4');
  blocked.addSubnet('0.0.0.0', 8, 'ipv4');
  blocked.addSubnet('169.254.0.0', 16, 'ipv4');
  blocked.addAddress('::1', 'ipv6');
  blocked.addAddress('::', 'ipv6');
  blocked.addSubnet('fe80::', 10, 'ipv6');
  for (const addresses of Object.values(networkInterfaces()))
    for (const { address, family } of addresses ?? []) blocked.addAddress(address, family === 'IPv6' ? 'ipv6' : 'ipv4');
  return blocked;
}

export class ProxyRefusal extends Error {
  override readonly name = 'ProxyRefusal';
}

/** The address to connect to for `host`, or a refusal when it is this host (checked after resolution, by address). */
export async function outsideAddress(host: string): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addresses = isIP(bare) ? [{ address: bare, family: isIP(bare) }] : await lookup(bare, { all: true });
  const blocked = thisHost();
  const inside = addresses.find(({ address }) => {
    const v4 = address.replace(/^::ffff:/i, '');
    return isIP(v4) === 4 ? blocked.check(v4, 'ipv4') : blocked.check(address, 'ipv6');
  });
  if (inside || addresses.length === 0)
    throw new ProxyRefusal(
      `${host} is this host (${inside?.address ?? 'no address'}): sandboxed agents cannot reach it`,
    );
  return addresses[0].address;
}

function proxy(): Server {
  const server = createHttpServer((request, response) => {
    let target: URL;
    try {
      target = new URL(request.url ?? '');
      if (target.protocol !== 'http:') throw new Error('not an absolute http URL');
    } catch {
      response.writeHead(400).end('treewarden sandbox proxy: send an absolute http URL, or CONNECT for https\n');
      return;
    }
    outsideAddress(target.hostname).then(
      (address) => forward(request, target, address, response),
      (error: Error) => response.writeHead(403).end(`treewarden sandbox proxy: ${error.message}\n`),
    );
  });
  server.on('connect', (request: IncomingMessage, client: Duplex, head: Buffer) => {
    client.once('error', () => client.destroy());
    const [host, port] = splitHostPort(request.url ?? '');
    outsideAddress(host).then(
      (address) => {
        const upstream = connect(port, address, () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (head.length) upstream.write(head);
          client.pipe(upstream).pipe(client);
        });
        upstream.once('error', (error) => client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\n${error.message}\n`));
        client.once('close', () => upstream.destroy());
      },
      (error: Error) => client.end(`HTTP/1.1 403 Forbidden\r\n\r\ntreewarden sandbox proxy: ${error.message}\n`),
    );
  });
  return server;
}

function forward(request: IncomingMessage, target: URL, address: string, response: ServerResponse) {
  const upstream = httpRequest(
    {
      host: address,
      port: Number(target.port || 80),
      method: request.method,
      path: target.pathname + target.search,
      headers: { ...request.headers, host: target.host },
    },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    },
  );
  upstream.once('error', (error) => response.writeHead(502).end(`treewarden sandbox proxy: ${error.message}\n`));
  request.pipe(upstream);
}

function splitHostPort(authority: string): [string, number] {
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(authority);
  return match ? [match[1], Number(match[2])] : [authority, 443];
}
