// @ts-check
/**
 * A jest reporter (plain CommonJS: jest loads reporters without its transform): at the end of every run it prints the
 * run's wall time (from the end of the global setup) and its 15 slowest files, each with its time and share, and
 * writes the same table to `.tmp/test-times.txt`, which `.ci/run` prints at its end (and every file's time to
 * `.tmp/test-times-all.txt`). A file over its share of the
 * budget (CONTRIBUTING.md, "The spec: tiers and budget") is marked.
 */
const fs = require('node:fs');
const path = require('node:path');

const SHOWN = 15;
const FILE_SHARE_S = 180;
const BUDGET_S = 25 * 60;

class SlowestFilesReporter {
  /** @param {{ rootDir: string }} globalConfig */
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  /**
   * @param {unknown} _contexts
   * @param {{ startTime: number, numTotalTests: number, numFailedTests: number,
   *   testResults: { testFilePath: string, perfStats: { start: number, end: number } }[] }} results
   */
  onRunComplete(_contexts, results) {
    const wallS = (Date.now() - results.startTime) / 1000;
    const files = results.testResults
      .map((r) => ({
        file: path.relative(this.rootDir, r.testFilePath),
        s: (r.perfStats.end - r.perfStats.start) / 1000,
      }))
      .sort((a, b) => b.s - a.s);
    const summed = files.reduce((sum, f) => sum + f.s, 0);
    const lines = [
      `jest: ${files.length} files, ${results.numTotalTests} tests (${results.numFailedTests} failed) in ` +
        `${wallS.toFixed(0)} s wall (budget ${BUDGET_S} s${wallS > BUDGET_S ? ', OVER' : ''}); files sum to ` +
        `${summed.toFixed(0)} s`,
      `the ${Math.min(SHOWN, files.length)} slowest files:`,
      ...files
        .slice(0, SHOWN)
        .map(
          (f) =>
            `${f.s.toFixed(1).padStart(8)} s ${((100 * f.s) / Math.max(summed, 1)).toFixed(1).padStart(5)}%  ${f.file}` +
            (f.s > FILE_SHARE_S ? `  (over its ${FILE_SHARE_S} s share)` : ''),
        ),
    ];
    const table = `${lines.join('\n')}\n`;
    process.stderr.write(`\n${table}`);
    const out = path.join(this.rootDir, '.tmp', 'test-times.txt');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, `${new Date().toISOString()}\n${table}`);
    // every file's time, for whoever works on the budget
    const all = files.map((f) => `${f.s.toFixed(1).padStart(8)} s  ${f.file}`).join('\n');
    fs.writeFileSync(path.join(this.rootDir, '.tmp', 'test-times-all.txt'), `${all}\n`);
  }
}

module.exports = SlowestFilesReporter;
