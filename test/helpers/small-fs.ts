// A directory on a small tmpfs, for tests of a full disk (mounting needs root, as on CI).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A directory on a tmpfs of `mib` MiB (unmounted by the returned cleanup), or null when mounting is not allowed here. */
export function smallFilesystem(mib: number): { dir: string; cleanup: () => void } | null {
  const dir = mkdtempSync(join(tmpdir(), 'gw-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mib}m`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  return { dir, cleanup: () => { try { execFileSync('umount', [dir], { stdio: 'ignore' }); } finally { rmSync(dir, { recursive: true, force: true }); } } };
}
