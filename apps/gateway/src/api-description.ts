import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildOpenApiDocument } from '@svc/contracts';
import type { GatewayOptions } from './gateway-options';
import { fillPlaceholders } from './site/placeholders';
import { toYaml } from './yaml';

/**
 * Writes this environment's API description into the gateway's html/ directory as
 * `openapi.json` and `openapi.yaml` (the same document), and fills the environment's base URL and
 * DOCS_URL into the built docs pages under html/docs/.
 */
export async function writeApiDescription(
  htmlDir: string,
  options: Pick<GatewayOptions, 'publicBaseUrl' | 'docsUrl'>,
): Promise<void> {
  const document = buildOpenApiDocument(options);
  await writeFile(join(htmlDir, 'openapi.json'), `${JSON.stringify(document, null, 2)}\n`, { mode: 0o644 });
  await writeFile(join(htmlDir, 'openapi.yaml'), toYaml(document), { mode: 0o644 });
  for (const entry of await readdir(join(htmlDir, 'docs'), { recursive: true, withFileTypes: true })) {
    if (entry.isDirectory() || !entry.name.endsWith('.html')) continue;
    const file = join(entry.parentPath, entry.name);
    await writeFile(file, fillPlaceholders(await readFile(file, 'utf8'), options), { mode: 0o644 });
  }
}
