/**
 * A TCP proxy in front of PostgreSQL that can stop forwarding, as a database that stops answering
 * (a network partition, a wedged server) looks to its clients: connections stay open, sent bytes
 * are held, nothing comes back, and new connections are accepted but never answered.
 */
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface WedgeableProxy {
  /** `databaseUrl` with its host and port replaced by the proxy's */
  url(databaseUrl: string): string;
  /** `127.0.0.1:<port>`, for a client that takes an address (Temporal) */
  address: string;
  wedge(): void;
  /** unreachable, as a server that is down looks: every connection reset, new ones refused at once */
  down(): void;
  /** forwarding again; clients reconnect */
  up(): void;
  close(): Promise<void>;
}

export async function startWedgeableProxy(databaseUrl: string): Promise<WedgeableProxy> {
  const target = new URL(databaseUrl);
  let wedged = false;
  let isDown = false;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    if (isDown) return void client.destroy();
    track(client);
    if (wedged) return; // accepted, never answered
    const upstream = connect(Number(target.port || 5432), target.hostname);
    track(upstream);
    client.on('data', (chunk) => void (wedged || upstream.write(chunk)));
    upstream.on('data', (chunk) => void (wedged || client.write(chunk)));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url(url) {
      const proxied = new URL(url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(port);
      return proxied.toString();
    },
    address: `127.0.0.1:${port}`,
    wedge() {
      wedged = true;
    },
    down() {
      isDown = true;
      for (const socket of sockets) socket.destroy();
    },
    up() {
      isDown = false;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
