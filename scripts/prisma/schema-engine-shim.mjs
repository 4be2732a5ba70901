#!/usr/bin/env node
// Stand-in for Prisma's native `schema-engine` binary, which this machine cannot download. prisma.config.ts
// points the CLI at it through PRISMA_SCHEMA_ENGINE_BINARY (Prisma's documented "custom engine binary"
// variable). It speaks the protocol the prisma 7.10 CLI speaks to the binary and serves it with Prisma's own
// schema engine compiled to WebAssembly (wasm-engine.mjs). Used by: generate (only checks this file exists),
// migrate dev | deploy | status | diff | reset.
//
// Invocations by the CLI:
//   shim --version                                                     (`prisma -v`)
//   shim --datasource '{"url":...}' cli can-connect-to-database|create-database
//   shim [--datamodels <file>]... [--datasource '{"url":...,"shadowDatabaseUrl":...}']
//        then JSON-RPC 2.0: one request per line on stdin, responses on stdout, logs on stderr.
import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { canConnect, closePools, createSchemaEngine, engineDir, ensureDatabase } from './wasm-engine.mjs';

const argv = process.argv.slice(2);
const values = (flag) => argv.flatMap((a, i) => (a === flag && i + 1 < argv.length ? [argv[i + 1]] : []));
// The CLI reads stderr as JSON log lines of this shape (target schema_engine::logger).
const log = (level, fields) =>
  process.stderr.write(
    JSON.stringify({ timestamp: new Date().toISOString(), level, fields, target: 'schema_engine::logger' }) + '\n',
  );

if (argv.includes('--version')) {
  const { version } = JSON.parse(await fs.readFile(path.join(engineDir, 'package.json'), 'utf8'));
  console.log(`schema-engine-cli ${version.split('.').pop()} (@prisma/schema-engine-wasm ${version} via wasm shim)`);
  process.exit(0);
}

const datasource = JSON.parse(values('--datasource')[0] ?? '{}');

// One-shot commands: `migrate dev|deploy|reset` check the database and create it when missing.
const cliIndex = argv.indexOf('cli');
if (cliIndex !== -1) {
  const command = argv[cliIndex + 1];
  // The CLI skips the first stderr line (the native engine's start-up line) and parses the rest as JSON.
  log('INFO', { message: `schema engine (wasm shim) cli ${command}` });
  try {
    if (command === 'can-connect-to-database') await canConnect(datasource.url);
    else if (command === 'create-database')
      console.log(JSON.stringify({ databaseName: await ensureDatabase(datasource.url) }));
    else throw new Error(`unsupported cli command: ${command}`);
    process.exit(0);
  } catch (e) {
    // P1003 (database does not exist) makes the CLI run create-database; P1001: server unreachable.
    const errorCode = e.code === '3D000' ? 'P1003' : e.code === 'ECONNREFUSED' ? 'P1001' : 'P1000';
    log('ERROR', { error_code: errorCode, message: e.message });
    process.exit(1);
  }
}

// JSON-RPC server. The engine is created on the first request (it connects to the database at once).
const schemaFiles = await Promise.all(
  values('--datamodels').map(async (p) => ({ path: p, content: await fs.readFile(p, 'utf8') })),
);
let enginePromise;
const engine = () =>
  (enginePromise ??= createSchemaEngine({
    url: datasource.url,
    shadowUrl: datasource.shadowDatabaseUrl,
    schemaFiles: schemaFiles.length ? schemaFiles : undefined,
    log: (line) => process.stderr.write(line.endsWith('\n') ? line : line + '\n'),
  }));
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');

async function call(method, params) {
  const e = await engine();
  if (method === 'diff') {
    // The native engine hands `migrate diff` output to the CLI as a `print` request; the wasm engine returns
    // it as `stdout`, which the CLI ignores. The CLI handles stdout lines in order, so the print request
    // is written before the result and needs no waiting for its answer.
    const result = await e.diff(params);
    if (result.stdout) send({ id: 0, method: 'print', params: { content: result.stdout.replace(/\n$/, '') } });
    return { ...result, stdout: null };
  }
  if (typeof e[method] !== 'function') throw new Error(`schema engine (wasm shim): unsupported method ${method}`);
  return (await e[method](params)) ?? {};
}

// Like the native engine: one request at a time, in order.
let queue = Promise.resolve();
readline
  .createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on('line', (line) => {
    if (!line.trim()) return;
    const request = JSON.parse(line);
    if (request.method === undefined) return; // the CLI's answer to a print request
    queue = queue.then(async () => {
      try {
        send({ id: request.id, result: await call(request.method, request.params ?? {}) });
      } catch (err) {
        // Shape of the native engine's errors; for a panic the CLI shows `message`, otherwise data.message.
        const panic = globalThis.PRISMA_WASM_PANIC_REGISTRY?.message;
        const isPanic = Boolean(panic) || err instanceof WebAssembly.RuntimeError;
        const message = panic || String(err?.message ?? err);
        send({
          id: request.id,
          error: {
            code: 4466,
            message: isPanic ? message : 'An error happened. Check the data field for details.',
            data: {
              is_panic: isPanic,
              message,
              meta: err?.meta ?? null,
              error_code: err?.code || null,
              backtrace: null,
            },
          },
        });
      }
    });
  })
  .on('close', async () => {
    await queue;
    await enginePromise?.then(
      (e) => e.free(),
      () => {},
    );
    await closePools();
    process.exit(0); // see createSchemaEngine: the engine leaves a 10 s timer armed
  });
