import { chmod, cp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NGINX_TEMP_DIRS } from './nginx-config';

/**
 * Lays out an nginx prefix directory: `nginx.conf`, `temp/*` and `html/` (a copy of `staticDir`).
 *
 * When nginx starts as root its workers run as `nobody`; they must be able to traverse the prefix
 * and read `html/`, so those are world-readable. nginx itself hands the temp directories to its
 * worker user at start-up.
 */
export async function writeGatewayBundle(
  outDir: string,
  nginxConf: string,
  staticDir: string,
): Promise<void> {
  await mkdir(outDir, { recursive: true });
  await chmod(outDir, 0o755);

  await mkdir(join(outDir, 'temp'), { recursive: true, mode: 0o755 });
  await chmod(join(outDir, 'temp'), 0o755);
  for (const dir of NGINX_TEMP_DIRS) {
    await mkdir(join(outDir, 'temp', dir), { recursive: true, mode: 0o700 });
  }

  const html = join(outDir, 'html');
  await rm(html, { recursive: true, force: true });
  await cp(staticDir, html, { recursive: true });
  await chmod(html, 0o755);
  for (const entry of await readdir(html, { recursive: true, withFileTypes: true })) {
    await chmod(join(entry.parentPath, entry.name), entry.isDirectory() ? 0o755 : 0o644);
  }

  await writeFile(join(outDir, 'nginx.conf'), nginxConf, { mode: 0o644 });
  await chmod(join(outDir, 'nginx.conf'), 0o644);
}
