import { buildApp, createLogger, loadConfig, type AppDefinition, type ConfigSpec } from '@svc/platform';
import { AUTH_SERVER } from '../../apps/auth-server/src/app.definition';
import { CONSENT_UI } from '../../apps/consent-ui/src/app.definition';
import { CREW_API } from '../../apps/crew-api/src/app.definition';
import { SPONSORSHIP_API } from '../../apps/sponsorship-api/src/app.definition';
import { WEBHOOK_DISPATCHER } from '../../apps/webhook-dispatcher/src/app.definition';
import { testServices } from './services';

/** Every Nest app, as `serveApp` knows it. */
export const APP_DEFINITIONS = [
  AUTH_SERVER,
  CONSENT_UI,
  CREW_API,
  SPONSORSHIP_API,
  WEBHOOK_DISPATCHER,
] as unknown as AppDefinition<ConfigSpec>[];

/**
 * The routes an app registers (method and Fastify pattern, `:param` style), read by building it as
 * `serveApp` does against this run's services and closing it again.
 */
export async function servedRoutes(
  definition: AppDefinition<ConfigSpec>,
): Promise<{ method: string; url: string }[]> {
  const services = testServices();
  const config = loadConfig(definition.config, {
    PORT: '1',
    METRICS_PORT: '0',
    APP_ENV: 'sandbox',
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    REDIS_KEY_PREFIX: services.redisKeyPrefix,
    AMQP_URL: services.amqpUrl,
  });
  const { app, httpOptions } = await buildApp(
    definition,
    config,
    createLogger(definition.name, 'silent'),
    false,
  );
  try {
    await app.init();
    return httpOptions.routes.list();
  } finally {
    await app.close();
  }
}
