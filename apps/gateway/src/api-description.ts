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
  for (const file of await htmlFiles(join(htmlDir, 'docs'))) {
    await writeFile(file, fillPlaceholders(await readFile(file, 'utf8'), options), { mode: 0o644 });
  }
}

async function htmlFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await htmlFiles(path)));
    else if (entry.name.endsWith('.html')) out.push(path);
  }
  return out;
}
