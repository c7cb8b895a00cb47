import type { DynamicModule } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  BASE_CONFIG,
  createHttpApp,
  createLogger,
  loadConfig,
  RouteIndex,
  type PlatformOptions,
} from '@svc/platform';
import type { Logger } from 'pino';

/**
 * Boots a module the way every app boots (createHttpApp: request ids, Problem filter, parsers)
 * on a free port, for tests that need the real HTTP stack around a test controller.
 */
export async function startHttpApp(
  name: string,
  build: (platform: PlatformOptions) => DynamicModule,
  extraConfig: object = {},
  logger: Logger = createLogger(name, 'silent'),
): Promise<{ app: NestFastifyApplication; url: string }> {
  const base = loadConfig(BASE_CONFIG, {
    PORT: '1',
    METRICS_PORT: '0',
    DOCS_URL: 'https://docs.test/docs',
    APP_ENV: 'sandbox',
  });
  const config = { ...base, ...extraConfig };
  const routes = new RouteIndex();
  const options = { app: name, logger, routes, config };
  const app = await createHttpApp(build({ app: name, config, logger, routes }), options);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: await app.getUrl() };
}
