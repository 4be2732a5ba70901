'use strict';
/**
 * PID 1 of a run's sandbox (processes/sandbox.ts), with no capability left. It serves, on the sandbox's own loopback,
 * the treewarden API (at the port the agent's TREEWARDEN_API_URL names) and an HTTP proxy to the outside network,
 * each relayed to a worker's gate (processes/sandbox-gate.ts) through the Unix sockets of the gate folder; then it
 * starts the agent and ends with its status. Plain CommonJS with no dependency: it starts in a few milliseconds.
 *
 * Signals: a stop reaches the agent itself (its process group, its owner token, its cgroup), so this process only
 * waits them out. When it ends, the kernel ends whatever the agent left in the sandbox.
 */
const net = require('node:net');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const [gateDir, apiPort, proxyPort, command, ...args] = process.argv.slice(2);

/** A connection to a live gate socket of this kind (a worker that died left a stale one: the next is tried). */
function connectGate(kind, done) {
  let names = [];
  try {
    names = fs.readdirSync(gateDir).filter((name) => name.startsWith(`${kind}-`) && name.endsWith('.sock'));
  } catch {
    // no gate: nothing to relay to
  }
  const next = () => {
    const name = names.pop();
    if (name === undefined) return done(null);
    const socket = net.connect(path.join(gateDir, name));
    socket.once('connect', () => {
      socket.removeAllListeners('error');
      done(socket);
    });
    socket.once('error', () => {
      socket.destroy();
      next();
    });
  };
  next();
}

function relay(port, kind) {
  return new Promise((listening, failed) => {
    const server = net.createServer((client) => {
      client.pause();
      client.on('error', () => client.destroy());
      connectGate(kind, (upstream) => {
        if (!upstream) return client.destroy();
        const close = () => {
          client.destroy();
          upstream.destroy();
        };
        upstream.on('error', close);
        upstream.on('close', close);
        client.on('close', close);
        client.pipe(upstream).pipe(client);
        client.resume();
      });
    });
    server.once('error', failed);
    server.listen(Number(port), '127.0.0.1', listening);
  });
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => undefined);

Promise.all([relay(apiPort, 'api'), relay(proxyPort, 'proxy')]).then(
  () => {
    const agent = spawn(command, args, { stdio: 'inherit' });
    agent.once('error', (error) => {
      process.stderr.write(`treewarden sandbox: cannot start ${command}: ${error.message}\n`);
      process.exit(127);
    });
    agent.once('exit', (code, signal) =>
      process.exit(code ?? 128 + (signal ? require('node:os').constants.signals[signal] : 0)),
    );
  },
  (error) => {
    process.stderr.write(`treewarden sandbox: cannot serve the API and the proxy inside: ${error.message}\n`);
    process.exit(125);
  },
);
