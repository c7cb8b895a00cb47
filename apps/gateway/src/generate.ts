import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { GATEWAY_ROUTES } from '@svc/contracts';
import { writeGatewayBundle } from './bundle';
import { ConfigError } from '@svc/platform';
import { gatewayOptionsFromEnv, type GatewayEnv } from './gateway-options';
import { renderNginxConfig } from './nginx-config';

const USAGE = `Usage: node dist/apps/gateway/src/generate.js --out <dir> [--static <dir>]

Writes <dir>/nginx.conf (from GATEWAY_ROUTES in @svc/contracts), <dir>/temp/* and <dir>/html/:
the docs site built by \`npm run build\` (dist/apps/gateway/static, or --static), with this
environment's openapi.json and openapi.yaml. Then run: nginx -p <dir> -c <dir>/nginx.conf

Environment: APP_ENV, PUBLIC_BASE_URL, DOCS_URL and the gateway's own variables
(docs/configuration.md, "gateway").`;

export interface GenerateIo {
  readonly stdout: (line: string) => void;
  readonly stderr: (line: string) => void;
}

const processIo: GenerateIo = {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
};

/** The CLI, minus the process: returns the exit code. */
export async function main(
  argv: readonly string[],
  env: GatewayEnv,
  io: GenerateIo = processIo,
): Promise<number> {
  let args: { out?: string; static?: string; help?: boolean };
  try {
    ({ values: args } = parseArgs({
      args: [...argv],
      options: { out: { type: 'string' }, static: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
    if (!args.help && !args.out) throw new Error('--out <dir> is required');
  } catch (error) {
    io.stderr(`gateway: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    io.stdout(USAGE);
    return 0;
  }

  try {
    const options = gatewayOptionsFromEnv(env);
    const config = renderNginxConfig(GATEWAY_ROUTES, options);
    const staticDir = args.static ? resolve(args.static) : findStaticDir();
    const out = resolve(args.out!);
    await writeGatewayBundle(out, config, staticDir, {
      publicBaseUrl: options.PUBLIC_BASE_URL,
      docsUrl: options.DOCS_URL,
    });
    io.stdout(
      `gateway: wrote ${join(out, 'nginx.conf')} (APP_ENV=${options.APP_ENV}); run: nginx -p ${out} -c ${join(out, 'nginx.conf')}`,
    );
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(
        `gateway: invalid environment: ${error.problems.map((p) => `${p.variable} ${p.reason}`).join('; ')}`,
      );
    } else {
      io.stderr(`gateway: ${(error as Error).stack ?? String(error)}`);
    }
    return 1;
  }
}

/** The static site `npm run build` writes, from dist/ or from source (Jest). */
function findStaticDir(): string {
  const candidates = [
    resolve(__dirname, '../static'),
    resolve(__dirname, '../../../../dist/apps/gateway/static'),
    resolve(process.cwd(), 'dist/apps/gateway/static'),
  ];
  const found = candidates.find((dir) => existsSync(join(dir, 'docs', 'reference.html')));
  if (!found)
    throw new Error(
      `the built docs site was not found (looked in ${candidates.join(', ')}); run \`npm run build\` or pass --static <dir>`,
    );
  return found;
}

if (require.main === module) {
  void main(process.argv.slice(2), process.env).then((code) => {
    process.exitCode = code;
  });
}
