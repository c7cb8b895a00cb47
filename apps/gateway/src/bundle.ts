import { chmod, cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildOpenApiDocument } from '@svc/contracts';
import type { GatewayOptions } from './gateway-options';
import { NGINX_TEMP_DIRS } from './nginx-config';
import { fillPlaceholders } from './site/placeholders';
import { toYaml } from './yaml';

/**
 * Lays out an nginx prefix directory: `nginx.conf`, `temp/*` and `html/`: a copy of `staticDir`
 * whose docs pages get this environment's base URL and DOCS_URL, and this environment's API
 * description as `openapi.json` and `openapi.yaml` (the same document).
 *
 * When nginx starts as root its workers run as `nobody`; they must be able to traverse the prefix
 * and read `html/`, so those are world-readable. nginx itself hands the temp directories to its
 * worker user at start-up.
 */
export async function writeGatewayBundle(
  outDir: string,
  nginxConf: string,
  staticDir: string,
  options: Pick<GatewayOptions, 'publicBaseUrl' | 'docsUrl'>,
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

  const document = buildOpenApiDocument(options);
  await writeFile(join(html, 'openapi.json'), `${JSON.stringify(document, null, 2)}\n`, { mode: 0o644 });
  await writeFile(join(html, 'openapi.yaml'), toYaml(document), { mode: 0o644 });
  for (const entry of await readdir(join(html, 'docs'), { recursive: true, withFileTypes: true })) {
    if (entry.isDirectory() || !entry.name.endsWith('.html')) continue;
    const file = join(entry.parentPath, entry.name);
    await writeFile(file, fillPlaceholders(await readFile(file, 'utf8'), options), { mode: 0o644 });
  }
}
