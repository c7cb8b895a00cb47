import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { buildOpenApiDocument, type OpenApiDocumentOptions } from '@svc/contracts';
import { NGINX_TEMP_DIRS } from './nginx-config';
import { fillPlaceholders } from './site/placeholders';

/**
 * Lays out an nginx prefix: `nginx.conf`, `temp/*` and `html/` (`staticDir` with this environment's
 * URLs filled in, and `openapi.json`/`.yaml`). Permissions are never widened.
 */
export async function writeGatewayBundle(
  outDir: string,
  nginxConf: string,
  staticDir: string,
  options: OpenApiDocumentOptions,
): Promise<void> {
  for (const dir of NGINX_TEMP_DIRS) {
    await mkdir(join(outDir, 'temp', dir), { recursive: true, mode: 0o700 });
  }

  const html = join(outDir, 'html');
  await rm(html, { recursive: true, force: true });
  await cp(staticDir, html, { recursive: true });

  await writeFile(join(outDir, 'nginx.conf'), nginxConf);

  const document = buildOpenApiDocument(options);
  await writeFile(join(html, 'openapi.json'), `${JSON.stringify(document, null, 2)}\n`);
  // Written out in full: a reader of the YAML meets no anchors for the objects the document reuses.
  await writeFile(join(html, 'openapi.yaml'), toYaml(document, { aliasDuplicateObjects: false }));
  for (const entry of await readdir(join(html, 'docs'), { recursive: true, withFileTypes: true })) {
    if (entry.isDirectory() || !entry.name.endsWith('.html')) continue;
    const file = join(entry.parentPath, entry.name);
    await writeFile(file, fillPlaceholders(await readFile(file, 'utf8'), options));
  }
}
