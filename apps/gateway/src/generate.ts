import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GATEWAY_ROUTES } from '@svc/contracts';
import { writeGatewayBundle } from './bundle';
import { ConfigError } from '@svc/platform';
import { gatewayOptionsFromEnv, type GatewayEnv } from './gateway-options';
import { renderNginxConfig } from './nginx-config';

const USAGE = `Usage: node dist/apps/gateway/src/generate.js --out <dir> [--static <dir>]

Writes <dir>/nginx.conf (from GATEWAY_ROUTES in @svc/contracts), <dir>/temp/* and <dir>/html/:
the docs site built by \`npm run build\` (dist/apps/gateway/static, or --static), with this
environment's openapi.json and openapi.yaml. Then run: nginx -p <dir> -c <dir>/nginx.conf

Environment: APP_ENV (sandbox|production), GATEWAY_PORT, GATEWAY_LISTEN_HOST, PUBLIC_BASE_URL, DOCS_URL,
AUTH_SERVER_UPSTREAMS, CONSENT_UI_UPSTREAMS, CREW_API_UPSTREAMS, SPONSORSHIP_API_UPSTREAMS
(comma-separated host:port), GATEWAY_UPSTREAM_CONNECT_TIMEOUT, GATEWAY_UPSTREAM_READ_TIMEOUT,
GATEWAY_WORKER_PROCESSES (auto or a number).`;

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
  let args: { out: string; staticDir?: string } | 'help';
  try {
    args = parseArgs(argv);
  } catch (error) {
    io.stderr(`gateway: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (args === 'help') {
    io.stdout(USAGE);
    return 0;
  }

  try {
    const options = gatewayOptionsFromEnv(env);
    const config = renderNginxConfig(GATEWAY_ROUTES, options);
    const staticDir = args.staticDir ?? findStaticDir();
    const out = resolve(args.out);
    await writeGatewayBundle(out, config, staticDir, options);
    io.stdout(
      `gateway: wrote ${join(out, 'nginx.conf')} (APP_ENV=${options.appEnv}); run: nginx -p ${out} -c ${join(out, 'nginx.conf')}`,
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

function parseArgs(argv: readonly string[]): { out: string; staticDir?: string } | 'help' {
  let out: string | undefined;
  let staticDir: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const value = () => {
      const next = inline ?? argv[++i];
      if (next === undefined || next === '') throw new Error(`${flag} needs a value`);
      return next;
    };
    if (flag === '--help' || flag === '-h') return 'help';
    else if (flag === '--out') out = value();
    else if (flag === '--static') staticDir = resolve(value());
    else throw new Error(`unknown argument ${JSON.stringify(arg)}`);
  }
  if (!out) throw new Error('--out <dir> is required');
  return { out, staticDir };
}

/**
 * The static site `npm run build` writes (dist/apps/gateway/static: the docs pages, their assets and
 * the Redoc bundle), whether this runs from dist/ or from source (Jest).
 */
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
