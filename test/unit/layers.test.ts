/**
 * @module The floors lint holds (`import-x/no-restricted-paths` in eslint.config.mjs): an import that reaches up a
 * floor fails `npm run lint`, and an import down a floor passes. Each case lints an existing file's path with one
 * import line as its text, through the project's own configuration.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const FAILING: [string, string, string][] = [
  ['workers/core-metrics.ts', "import { imported } from '../scripts/provision/temporal-cli';", 'tooling'],
  ['runs/runs.ts', "import { imported } from '../testing/harness';", 'tooling'],
  ['domain/liveness.ts', "import { imported } from '../dispatch/wakes';", 'domain/ is pure rules'],
  ['client/index.ts', "import { imported } from '../db/prisma';", 'the typed client'],
  ['runs/runs.ts', "import { imported } from '../api/server';", 'a capability calls down'],
  ['holds/release.ts', "import { imported } from '../activities';", 'a capability calls down'],
  ['temporal/schedules.ts', "import { imported } from '../workers/tracing';", 'a capability calls down'],
  ['activities/heartbeat.ts', "import { imported } from '../api/server';", 'activities are called by workers'],
  ['dispatch/wakes.ts', "import { imported } from '../holds/release';", 'dispatch/ is the floor where work starts'],
  ['dispatch/resume.ts', "import { imported } from '../runs/runs';", 'dispatch/ is the floor where work starts'],
  ['dispatch/company-cap.ts', "import { imported } from '../changes/dispatcher';", 'dispatch/ is the floor'],
  ['dispatch/company-cap.ts', "import { imported } from '../temporal/schedules';", 'dispatch/ is the floor'],
  ['dispatch/begin.ts', "import { imported } from '../workflows/company-cap';", 'dispatch/ is the floor'],
  ['tree/walk.ts', "import { imported } from '../dispatch/wakes';", 'tree/ is the floor of tree queries'],
  ['tree/queries.ts', "import { imported } from '../issues/issues';", 'tree/ is the floor of tree queries'],
  ['tree/queries.ts', "import { imported } from '../runtime/deps';", 'tree/ is the floor of tree queries'],
  ['acp/paths.ts', "import { imported } from '../runs/run-files';", "acp/ runs inside a run's sandbox"],
];
const PASSING: [string, string][] = [
  ['runs/runs.ts', "import { imported } from '../domain/statuses';"],
  ['workers/core-metrics.ts', "import { imported } from '../runtime/ports';"],
  ['api/server.ts', "import { imported } from '../holds/release';"],
  ['scripts/start.ts', "import { imported } from '../testing/harness';"],
  ['holds/release.ts', "import { imported } from '../dispatch/wakes';"],
  ['watchdogs/review-wake.ts', "import { imported } from '../dispatch/wakes';"],
  ['dispatch/wakes.ts', "import { imported } from '../tree/queries';"],
  ['dispatch/begin.ts', "import { imported } from '../changes/record';"],
  ['dispatch/company-cap.ts', "import { imported } from '../temporal/orchestrator';"],
  ['tree/queries.ts', "import { imported } from '../db/prisma';"],
  ['acp/session-rules.ts', "import { imported } from '../domain/checkpoint';"],
];

/**
 * ESLint loads its ESM configuration by a dynamic import, which jest's module sandbox refuses: the cases are linted
 * in one plain node process, through ESLint's API, with the project's own eslint.config.mjs.
 */
function lintAll(cases: [string, string][]): string[][] {
  const script = `
    const { ESLint } = require('eslint');
    const cases = JSON.parse(process.env.LAYER_CASES);
    (async () => {
      // only the rule under test, and no type information: the layers need none, and the project service costs a minute
      const eslint = new ESLint({
        ruleFilter: ({ ruleId }) => ruleId === 'import-x/no-restricted-paths',
        overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
      });
      const out = [];
      for (const [filePath, importLine] of cases) {
        const [result] = await eslint.lintText(importLine + '\\nexport const used = imported;\\n', { filePath });
        out.push(result.messages.filter((m) => m.ruleId === 'import-x/no-restricted-paths').map((m) => m.message));
      }
      process.stdout.write(JSON.stringify(out));
    })();`;
  const stdout = execFileSync(process.execPath, ['-e', script], {
    cwd: join(__dirname, '..', '..'),
    env: { ...process.env, LAYER_CASES: JSON.stringify(cases) },
    encoding: 'utf8',
  });
  return JSON.parse(stdout);
}

const results = lintAll([...FAILING.map(([f, i]) => [f, i] as [string, string]), ...PASSING]);

test.each(FAILING.map((c, index) => [...c, index] as const))(
  '%s importing %s fails lint (%s)',
  (_file, _import, message, index) => {
    expect(results[index]).toHaveLength(1);
    expect(results[index][0]).toContain(message);
  },
);

test.each(PASSING.map((c, index) => [...c, FAILING.length + index] as const))(
  '%s importing %s, down a floor, passes',
  (_file, _import, index) => {
    expect(results[index]).toEqual([]);
  },
);
