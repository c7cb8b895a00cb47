import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { findGatewayRoute, GATEWAY_OWN_PATHS, GATEWAY_ROUTES, PROBE_PATHS } from '@svc/contracts';
import {
  createHttpApp,
  createLogger,
  loadConfig,
  RouteIndex,
  type AppDefinition,
  type ConfigSpec,
} from '@svc/platform';
import { AUTH_SERVER } from '../../apps/auth-server/src/app.definition';
import { CONSENT_UI } from '../../apps/consent-ui/src/app.definition';
import { CREW_API } from '../../apps/crew-api/src/app.definition';
import { SPONSORSHIP_API } from '../../apps/sponsorship-api/src/app.definition';
import { WEBHOOK_DISPATCHER } from '../../apps/webhook-dispatcher/src/app.definition';
import { testServices } from './support/services';

/**
 * The gateway's route table is the one source of truth: every route an app serves publicly must
 * be reachable through an entry of the table that points at that very app.
 */
const services = testServices();
const definitions = [
  AUTH_SERVER,
  CONSENT_UI,
  CREW_API,
  SPONSORSHIP_API,
  WEBHOOK_DISPATCHER,
] as unknown as AppDefinition<ConfigSpec>[];

async function servedRoutes(
  definition: AppDefinition<ConfigSpec>,
): Promise<{ method: string; url: string }[]> {
  const config = loadConfig(definition.config, {
    PORT: '1',
    APP_ENV: 'sandbox',
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    REDIS_KEY_PREFIX: services.redisKeyPrefix,
    AMQP_URL: services.amqpUrl,
  });
  const logger = createLogger(definition.name, 'silent');
  const routes = new RouteIndex();
  const app: NestFastifyApplication = await createHttpApp(
    definition.rootModule({ app: definition.name, config, logger, routes }),
    { app: definition.name, logger, routes, config: config as never },
  );
  try {
    await app.init();
    return routes.list();
  } finally {
    await app.close();
  }
}

describe('gateway route table', () => {
  it.each(definitions.map((d) => [d.name, d] as const))(
    'covers every public route %s serves',
    async (name, definition) => {
      const routes = await servedRoutes(definition);
      expect(routes.map((r) => r.url)).toEqual(expect.arrayContaining([...PROBE_PATHS]));
      const uncovered = routes
        .filter((r) => !(PROBE_PATHS as readonly string[]).includes(r.url))
        .filter((r) => findGatewayRoute(r.url.replace(/:[^/]+/g, 'x'))?.app !== name)
        .map((r) => `${r.method} ${r.url}`);
      expect(uncovered).toEqual([]);
    },
  );

  it('sends no path to two places and shadows none of the gateway’s own paths', () => {
    const keys = GATEWAY_ROUTES.map((r) => `${r.match}:${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const own of GATEWAY_OWN_PATHS) expect(findGatewayRoute(own)).toBeUndefined();
  });
});
