// Lint: no floating promises anywhere; workflow code stays deterministic (no Node builtins,
// no database, no I/O modules) because it is replayed inside Temporal's sandbox.
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = builtinModules.flatMap((m) => [m, `node:${m}`]);

// The floors (CONTRIBUTING, "Map"): each may import only from the floors beneath it. Tooling (scripts/, testing/,
// bench/) and the spec (test/) sit above everything, and nothing that ships imports them.
const TOOLING = ['./scripts', './testing', './bench', './test'];
const CAPABILITIES = [
  './access',
  './acp',
  './changes',
  './dispatch',
  './holds',
  './interactions',
  './issues',
  './liveness',
  './monitors',
  './notifications',
  './postmortem',
  './processes',
  './retention',
  './runs',
  './tree',
  './watchdogs',
];
const SHIPPED = [
  './activities',
  './api',
  './cli',
  './client',
  './db',
  './domain',
  './runtime',
  './temporal',
  './workers',
  './workflows',
  ...CAPABILITIES,
];
const ENTRY_POINTS = ['./api', './workers', './cli'];
// the one file dispatch/ may import of each folder beside it: the change record, the orchestrator and Deps (types)
const DISPATCH_BENEATH = {
  './changes': ['./record.ts'],
  './temporal': ['./orchestrator.ts'],
  './runtime': ['./deps.ts'],
};
const DISPATCH_FLOOR =
  'dispatch/ is the floor where work starts: it imports only tree/, db/, domain/, changes/record.ts, ' +
  'temporal/orchestrator.ts and runtime/deps.ts';
export const LAYER_ZONES = [
  {
    target: SHIPPED,
    from: TOOLING,
    message: 'shipped code never imports tooling or tests (scripts/, testing/, bench/, test/)',
  },
  {
    target: './domain',
    from: [...SHIPPED.filter((f) => f !== './domain')],
    message: 'domain/ is pure rules: it imports only domain/ (and generated types)',
  },
  {
    target: './client',
    from: SHIPPED.filter((f) => f !== './domain' && f !== './client'),
    message: 'the typed client imports only domain/',
  },
  {
    target: [...CAPABILITIES, './db', './temporal', './runtime'],
    from: [...ENTRY_POINTS, './activities', './client'],
    message: 'a capability calls down: never into the entry points (api/, workers/, cli/), activities/ or the client',
  },
  {
    // the floor where work starts (wakes, claims, the company's cap and turn, a run's begin, resumes): every
    // capability that starts work calls down into it, and it calls nothing above it (the entry points, activities/
    // and the client are the zone of every capability, above)
    target: './dispatch',
    from: [...CAPABILITIES.filter((f) => !['./dispatch', './tree', './changes'].includes(f)), './workflows'],
    message: DISPATCH_FLOOR,
  },
  ...Object.entries(DISPATCH_BENEATH).map(([from, except]) => ({
    target: './dispatch',
    from,
    except,
    message: DISPATCH_FLOOR,
  })),
  {
    target: './tree',
    from: SHIPPED.filter(
      (f) => !['./tree', './db', './domain', ...ENTRY_POINTS, './activities', './client'].includes(f),
    ),
    message: 'tree/ is the floor of tree queries beneath dispatch/: it imports only db/ and domain/',
  },
  {
    target: './acp',
    from: SHIPPED.filter((f) => f !== './domain' && f !== './acp'),
    message: "acp/ runs inside a run's sandbox, apart from the service: it imports only domain/",
  },
  {
    target: './activities',
    from: [...ENTRY_POINTS, './client'],
    message: 'activities are called by workers: they never import an entry point or the client',
  },
];

export default tseslint.config(
  { ignores: ['node_modules/', 'generated/', '.data/', '.tmp/', '.bench/', 'coverage/', '**/*.mjs', '**/*.js'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
    },
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // a cycle means two folders each depend on the other: one capability leaking into another's room
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': ['error', { zones: LAYER_ZONES }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },
  {
    // small files and short lines in everything that ships; tests may be long specs
    files: ['**/*.ts'],
    ignores: ['test/**', 'client/openapi.gen.ts'],
    rules: {
      'max-len': ['error', { code: 120 }],
      'max-lines': ['error', { max: 300 }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'workflow code must be deterministic: no Node builtins',
          })),
          patterns: [
            {
              group: ['@prisma/*', 'pg', 'pino', 'fastify', '**/generated/**', '**/db/**'],
              message: 'workflow code must not do I/O',
            },
            {
              // values come only from workflows/ and domain/; anything else (activities, services) as types only
              group: [
                '../*',
                '!../domain',
                '!../domain/**',
                '@temporalio/activity',
                '@temporalio/worker',
                '@temporalio/client',
              ],
              allowTypeImports: true,
              message: 'workflows may import values only from workflows/ and domain/; other code as types only',
            },
          ],
        },
      ],
    },
  },
);
