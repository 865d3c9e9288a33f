// Ownership and mode checks of the local channel's files (docs/security.md §6): the secret file,
// the socket directory and the socket must belong to this user and be closed to group and
// other. `lstat`, never `stat`: a symbolic link planted in their place is refused, not followed.
// `node:fs` only: the command-hook shim (hook.ts) runs these checks before it sends anything.
import { lstatSync } from 'node:fs';

/** What a private path must be. */
export type PrivateKind = 'dir' | 'socket' | 'file';

/**
 * Why `path` is not a private `kind` of this user (undefined when it is): missing, another file
 * type (a symlink included), owned by another uid, or any group/other permission bit set.
 */
export function privatePathProblem(path: string, kind: PrivateKind): string | undefined {
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    return `${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  const isKind = kind === 'dir' ? st.isDirectory() : kind === 'socket' ? st.isSocket() : st.isFile();
  if (!isKind) return `${path} is not a ${kind === 'dir' ? 'directory' : kind} (a symbolic link is never followed)`;
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  if (uid !== undefined && st.uid !== uid) return `${path} belongs to uid ${st.uid}, not to this user (uid ${uid})`;
  if ((st.mode & 0o077) !== 0)
    return `${path} is accessible to group or other (mode ${(st.mode & 0o777).toString(8).padStart(3, '0')}; want ${kind === 'dir' ? '700' : '600'})`;
  return undefined;
}
