/**
 * @module Unit: no import cycles between the repository's modules, type-only imports included. Lint's
 * `import-x/no-cycle` skips `import type`, but a type cycle still ties two capabilities together (the 13-file
 * activities <-> services cycle of issue 18 was one), so this walks every import TypeScript sees.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.join(__dirname, '..', '..');

function importGraph(): Map<string, string[]> {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f && !f.startsWith('generated/'));
  const known = new Set(files);
  const resolve = (from: string, specifier: string) => {
    const base = path.posix.join(path.posix.dirname(from), specifier);
    return [`${base}.ts`, `${base}/index.ts`].find((candidate) => known.has(candidate));
  };
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(path.join(root, file), 'utf8'), true, true);
    const local = importedFiles.filter((i) => i.fileName.startsWith('.')).map((i) => resolve(file, i.fileName));
    graph.set(
      file,
      local.filter((f): f is string => f !== undefined),
    );
  }
  return graph;
}

/** Strongly connected components of more than one module (Tarjan): each one is a cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('the import graph, type-only imports included, has no cycle', () => {
  const graph = importGraph();
  expect(graph.size).toBeGreaterThan(100);
  expect(cycles(graph)).toEqual([]);
});

test('the cycle finder reports a three-module cycle, and not the module that only points into it', () => {
  const graph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts']],
  ]);
  expect(cycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
});
