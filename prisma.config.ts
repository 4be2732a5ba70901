import path from 'node:path';
import { defineConfig } from 'prisma/config';

// The Prisma CLI will not run generate/migrate/validate until it has a native schema-engine binary, which it
// downloads from a host this machine cannot reach. PRISMA_SCHEMA_ENGINE_BINARY (Prisma's documented override)
// points it at a stand-in serving Prisma's own schema engine compiled to WebAssembly: see scripts/prisma/.
// Set here, because the config is loaded before that check, so a plain `npx prisma ...` needs no env var.
// An explicitly exported PRISMA_SCHEMA_ENGINE_BINARY (a real binary) wins.
// (The CLI loads this file with jiti as CommonJS: __dirname works, import.meta.url would not type-check.)
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.join(__dirname, 'scripts/prisma/schema-engine-shim.mjs');
process.env.CHECKPOINT_DISABLE ??= '1'; // no update check over the network

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    // Without DATABASE_URL: a local dev database (generate/validate never connect).
    url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/treewarden_dev',
    shadowDatabaseUrl: process.env.SHADOW_DATABASE_URL,
  },
});
