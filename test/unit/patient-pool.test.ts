import net from 'node:net';
import { Client } from 'pg';
import { acquirePatiently, isAcquireFailure } from '../../db/patient-pool';

// pg-pool's own messages for a full pool's queue timing out and for a new connection's connect timeout
const queueTimeout = () => new Error('timeout exceeded when trying to connect');
const connectTimeout = () =>
  new Error('Connection terminated due to connection timeout', {
    cause: new Error('Connection terminated unexpectedly'),
  });

test('a connection the pool could not hand out in time is asked for again, and the connection is returned', async () => {
  let calls = 0;
  const result = await acquirePatiently(async () => {
    calls++;
    if (calls === 1) throw queueTimeout();
    if (calls === 2) throw connectTimeout();
    return 'connection';
  }, 5);
  expect(result).toBe('connection');
  expect(calls).toBe(3);
});

test('the attempts are bounded: the last acquire failure is thrown', async () => {
  let calls = 0;
  await expect(
    acquirePatiently(async () => {
      calls++;
      throw connectTimeout();
    }, 2),
  ).rejects.toThrow('connection timeout');
  expect(calls).toBe(2);
});

test('any other failure is thrown at once: a connection was reached or refused for a reason waiting does not fix', async () => {
  let calls = 0;
  await expect(
    acquirePatiently(async () => {
      calls++;
      throw new Error('password authentication failed for user "treewarden"');
    }, 5),
  ).rejects.toThrow('password authentication failed');
  expect(calls).toBe(1);
});

test("a lone Client's connect timeout (a server that accepts and never answers) counts as no connection in time", async () => {
  const sockets: net.Socket[] = [];
  const silent = net.createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as net.AddressInfo;
  try {
    const client = new Client({ host: '127.0.0.1', port, connectionTimeoutMillis: 100 });
    const failure = await client.connect().then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(isAcquireFailure(failure)).toBe(true);
  } finally {
    sockets.forEach((socket) => socket.destroy());
    await new Promise((resolve) => silent.close(resolve));
  }
});
