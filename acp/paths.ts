/**
 * Path confinement for the client side of ACP (`fs/read_text_file`, `fs/write_text_file`): a path the agent names
 * is served only when it resolves, symlinks followed, inside the workspace. The answer names the real path to open
 * (the checks are made on it) or why it is refused, in words an agent can act on.
 */
import { lstatSync, realpathSync } from 'node:fs';
import path from 'node:path';

export type Access = 'read' | 'write';

export type Confinement =
  | { ok: true; path: string }
  | { ok: false; problem: 'invalid_path' | 'outside_workspace' | 'not_found' | 'protected'; message: string };

/** `candidate` is `root` or below it; both absolute and normalized. */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

const refuse = (problem: Exclude<Confinement, { ok: true }>['problem'], message: string): Confinement => ({
  ok: false,
  problem,
  message,
});

const exists = (p: string): boolean => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

/**
 * The real path of `absolute` for `access`: a read needs the file; a write may name a file (and folders) that do
 * not exist yet, so the deepest existing ancestor is resolved and the rest appended. Null when it cannot be resolved.
 */
function realTarget(absolute: string, access: Access): string | null {
  try {
    if (access === 'read' || exists(absolute)) return realpathSync(absolute);
    let ancestor = path.dirname(absolute);
    while (!exists(ancestor)) ancestor = path.dirname(ancestor);
    return path.join(realpathSync(ancestor), path.relative(ancestor, absolute));
  } catch {
    return null;
  }
}

/**
 * Where a request for `requested` may go. `workspace` is the workspace's real path. A relative path is taken from
 * the workspace (ACP asks for absolute ones); `..` is resolved before the check, so it cannot climb out.
 * `protectedPaths` (real paths) are treewarden's own files a workspace may hold (the run folder's checkpoint, journal
 * and session file when the run has no `cwd`): never written through the protocol.
 */
export function confinePath(
  workspace: string,
  requested: unknown,
  access: Access,
  protectedPaths: ReadonlySet<string> = new Set(),
): Confinement {
  if (typeof requested !== 'string' || requested === '' || requested.includes('\0'))
    return refuse('invalid_path', 'the path must be a non-empty string');
  const absolute = path.resolve(workspace, requested);
  const outside = () =>
    refuse(
      'outside_workspace',
      `${requested} is outside the workspace ${workspace}: treewarden serves fs/* only inside it`,
    );
  if (!isInside(workspace, absolute)) return outside();
  const real = realTarget(absolute, access);
  if (real === null)
    return access === 'read'
      ? refuse('not_found', `${requested} does not exist in the workspace`)
      : refuse('invalid_path', `${requested} cannot be resolved (a dangling symlink?): it is not written`);
  if (!isInside(workspace, real)) return outside();
  if (access === 'write' && (protectedPaths.has(real) || protectedPaths.has(absolute)))
    return refuse('protected', `${requested} is one of treewarden's own files: it is not written through ACP`);
  return { ok: true, path: real };
}
