/** Free-port helpers for the servers treewarden starts (the worker's core metrics) and its local provisioning. */
import net from 'node:net';

/**
 * Ask the kernel for a free TCP port on `host` (listen on port 0, read it back, close).
 *
 * There is an unavoidable race between closing the probe socket and the real server binding the port; callers that
 * spawn a server must treat "address already in use" as a retryable start failure.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ host, port: 0, exclusive: true }, () => {
      const addr = srv.address();
      if (addr === null || typeof addr === 'string') {
        srv.close();
        reject(new Error(`freePort: unexpected address ${String(addr)}`));
        return;
      }
      const { port } = addr;
      srv.close((err) => (err ? reject(err) : resolve(port)));
    });
  });
}

/** `n` distinct free ports (each probe is kept open until all are chosen, so they cannot collide with each other). */
export async function freePorts(n: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < n; i++) {
      const srv = net.createServer();
      srv.unref();
      servers.push(srv);
      ports.push(
        await new Promise<number>((resolve, reject) => {
          srv.once('error', reject);
          srv.listen({ host, port: 0, exclusive: true }, () => {
            const addr = srv.address();
            if (addr === null || typeof addr === 'string')
              reject(new Error(`freePorts: unexpected address ${String(addr)}`));
            else resolve(addr.port);
          });
        }),
      );
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((r) => (s.listening ? s.close(() => r()) : r()))));
  }
}

/**
 * `n` distinct ports in [min, max] that are free now (same race as {@link freePort}). For servers that cannot take
 * the kernel's ephemeral ports, e.g. temporal-server stores membership ports in a smallint column (max 32767).
 */
export async function freePortsInRange(n: number, min: number, max: number, host = '127.0.0.1'): Promise<number[]> {
  const ports = new Set<number>();
  for (let tries = 0; ports.size < n; tries++) {
    if (tries > 50 * n) throw new Error(`freePortsInRange: no ${n} free ports in ${min}-${max}`);
    const port = min + Math.floor(Math.random() * (max - min + 1));
    if (ports.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.unref();
      srv.once('error', () => resolve(false));
      srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(true)));
    });
    if (free) ports.add(port);
  }
  return [...ports];
}

/** True when nothing listens on `port` of `host` (a probe listen succeeds). */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(false) : reject(error)));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}
