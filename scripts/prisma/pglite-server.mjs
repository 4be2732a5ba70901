#!/usr/bin/env node
// Zero-install PostgreSQL for dev: PGlite (PostgreSQL 18 compiled to WebAssembly) behind pglite-socket's
// wire-protocol server, so the app (adapter-pg), the Prisma CLI and psql all use it through a URL.
//   node scripts/prisma/pglite-server.mjs <dataDir> <port>
// Main database persisted in <dataDir>, on 127.0.0.1:<port>. An in-memory shadow database for
// `prisma migrate dev` (SHADOW_DATABASE_URL; the shim empties it on every use) on <port>+1: PGlite serves a
// single database and cannot CREATE DATABASE a temporary one as the migration engine otherwise would.
// Prints one line on stdout when ready: {"ready":true,"url":"postgresql://...","shadowUrl":"postgresql://..."}
// Caveats: one PostgreSQL backend for all connections (queries are serialised; a transaction's queries are
// kept together), PostgreSQL 18 while the production server may be older.
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const [dataDir, portArg] = process.argv.slice(2);
const port = Number(portArg);
if (!dataDir || !Number.isInteger(port) || port <= 0) {
  console.error('usage: node scripts/prisma/pglite-server.mjs <dataDir> <port>');
  process.exit(2);
}

const host = '127.0.0.1';
const [db, shadow] = await Promise.all([PGlite.create({ dataDir }), PGlite.create()]);
// pglite-socket accepts one connection by default; the app's pool and the CLI need more.
const servers = [
  new PGLiteSocketServer({ db, host, port, maxConnections: 64 }),
  new PGLiteSocketServer({ db: shadow, host, port: port + 1, maxConnections: 64 }),
];
try {
  await Promise.all(servers.map((s) => s.start()));
} catch (e) {
  console.error(`pglite-server: cannot listen on ${host}:${port}/${port + 1}: ${e.message}`);
  process.exit(1);
}

// PGlite has no authentication: any user/password is accepted.
const url = (p) => `postgresql://postgres:postgres@${host}:${p}/postgres`;
console.log(JSON.stringify({ ready: true, url: url(port), shadowUrl: url(port + 1) }));

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all([db.close(), shadow.close()]); // flushes the data dir
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
