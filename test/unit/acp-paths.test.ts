/**
 * @module Unit: path confinement of the ACP supervisor's fs/* (acp/paths.ts). A path is served only when it
 * resolves, symlinks followed, inside the workspace; `..` cannot climb out; treewarden's own files are not written.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { confinePath, isInside } from '../../acp/paths';

const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), 'acp-paths-')));
const ws = path.join(scratch, 'ws');
const outside = path.join(scratch, 'outside');

beforeAll(() => {
  mkdirSync(path.join(ws, 'src'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(path.join(ws, 'src', 'a.ts'), 'a');
  writeFileSync(path.join(outside, 'secret'), 's');
  symlinkSync(outside, path.join(ws, 'escape'));
  symlinkSync(path.join(outside, 'secret'), path.join(ws, 'secret-link'));
  symlinkSync(path.join(ws, 'src'), path.join(ws, 'src-link'));
  symlinkSync(path.join(scratch, 'nowhere'), path.join(ws, 'dangling'));
  writeFileSync(path.join(ws, 'checkpoint.json'), '{}');
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

test.each([
  ['/a', '/a', true],
  ['/a', '/a/b', true],
  ['/a', '/ab', false],
  ['/a', '/', false],
  ['/a', '/a/..b', true],
  ['/a/b', '/a', false],
])('isInside(%s, %s) is %s', (root, candidate, inside) => {
  expect(isInside(root, candidate)).toBe(inside);
});

test.each<[string, string, 'read' | 'write', string]>([
  ['an absolute path inside', 'src/a.ts', 'read', 'src/a.ts'],
  ['a relative path, taken from the workspace', 'RELATIVE:src/a.ts', 'read', 'src/a.ts'],
  ['a .. that stays inside', 'src/../src/a.ts', 'read', 'src/a.ts'],
  ['a symlink to a folder inside', 'src-link/a.ts', 'read', 'src/a.ts'],
  ['a new file', 'src/new.ts', 'write', 'src/new.ts'],
  ['a new file in new folders', 'deep/er/new.ts', 'write', 'deep/er/new.ts'],
  ['a new file under a symlinked folder inside', 'src-link/b.ts', 'write', 'src/b.ts'],
])('served: %s', (_case, requested, access, expected) => {
  const asked = requested.startsWith('RELATIVE:') ? requested.slice(9) : path.join(ws, requested);
  expect(confinePath(ws, asked, access)).toEqual({ ok: true, path: path.join(ws, expected) });
});

test.each<[string, string, 'read' | 'write', string]>([
  ['/etc/passwd', '/etc/passwd', 'read', 'outside_workspace'],
  ['a .. escape', `${ws}/../outside/secret`, 'read', 'outside_workspace'],
  ['a relative .. escape', '../outside/secret', 'read', 'outside_workspace'],
  ['a write through a .. escape', `${ws}/src/../../x`, 'write', 'outside_workspace'],
  ['a read through a symlinked folder out', `${ws}/escape/secret`, 'read', 'outside_workspace'],
  ['a write through a symlinked folder out', `${ws}/escape/new`, 'write', 'outside_workspace'],
  ['a symlinked file out', `${ws}/secret-link`, 'read', 'outside_workspace'],
  ['a write over a symlinked file out', `${ws}/secret-link`, 'write', 'outside_workspace'],
  ['a missing file', `${ws}/src/none.ts`, 'read', 'not_found'],
  ['a dangling symlink, written', `${ws}/dangling`, 'write', 'invalid_path'],
  ['an empty path', '', 'read', 'invalid_path'],
  ['a NUL byte', `${ws}/a\0b`, 'write', 'invalid_path'],
  ['a protected file', `${ws}/checkpoint.json`, 'write', 'protected'],
])('refused: %s', (_case, requested, access, problem) => {
  const protectedPaths = new Set([path.join(ws, 'checkpoint.json')]);
  const c = confinePath(ws, requested, access, protectedPaths);
  expect(c).toMatchObject({ ok: false, problem });
  if (!c.ok) expect(c.message).toContain(problem === 'protected' ? "treewarden's own" : '');
});

test('a refusal says where the workspace is, in words an agent can act on', () => {
  expect(confinePath(ws, '/etc/passwd', 'read')).toEqual({
    ok: false,
    problem: 'outside_workspace',
    message: `/etc/passwd is outside the workspace ${ws}: treewarden serves fs/* only inside it`,
  });
});

test('a protected file may still be read', () => {
  const protectedPaths = new Set([path.join(ws, 'checkpoint.json')]);
  expect(confinePath(ws, path.join(ws, 'checkpoint.json'), 'read', protectedPaths)).toMatchObject({ ok: true });
});

test('a non-string path is refused, not thrown on', () => {
  expect(confinePath(ws, 42, 'read')).toMatchObject({ ok: false, problem: 'invalid_path' });
});
