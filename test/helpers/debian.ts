// Debian packages the tests run as outside parties (pebble, zbar-tools): found on PATH, or installed
// with apt-get when missing (the test process runs as root in CI, so a fresh machine passes).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function onPath(cmd: string): string | null {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':').concat('/usr/bin', '/usr/sbin')) {
    const file = path.join(dir, cmd);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** The path of `binary`, installing Debian's `pkg` with apt-get first when it is missing. */
export function ensureDebianBinary(binary: string, pkg: string): string {
  const found = onPath(binary);
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `${binary} is not installed and this process is not root: run \`apt-get install -y ${pkg}\` first.`,
    );
  }
  const apt = (args: string[]) => execFileSync('apt-get', args, { stdio: 'pipe', timeout: 600_000 });
  apt(['update', '-qq']);
  apt(['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '-qq', pkg]);
  const installed = onPath(binary);
  if (!installed) throw new Error(`apt-get installed ${pkg}, but no ${binary} binary is on PATH`);
  return installed;
}
