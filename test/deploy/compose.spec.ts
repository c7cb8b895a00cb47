/** docker-compose.yml: the local stack. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_PORTS, NEST_APPS } from '@svc/contracts';
import { parse } from 'yaml';
import { APPS, amqpUser, pgRole } from '../../scripts/lib/credentials.cjs';
import { ROOT, UPSTREAM_APPS } from './k8s-render';
/* eslint-disable @typescript-eslint/no-explicit-any */
describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, any>;
  };
  const services = compose.services;
  const env = (service: string): Record<string, string> => services[service].environment ?? {};

  it('runs the backing services with health checks', () => {
    expect(services.postgres.image).toMatch(/^postgres:1[5-9]/);
    expect(services.redis.image).toMatch(/^redis:7/);
    expect(services.rabbitmq.image).toMatch(/^rabbitmq:4\.\d+\.\d+-management$/);
    // Exact releases, as in k8s/.
    for (const name of ['postgres', 'redis', 'rabbitmq']) expect(services[name].image).toMatch(/:\d+\.\d+/);
    for (const name of ['postgres', 'redis', 'rabbitmq']) {
      expect(services[name].healthcheck?.test?.length).toBeGreaterThan(0);
    }
  });

  it('migrates every app and then seeds the sandbox, once, before the apps start', () => {
    const script = [].concat(services.migrate.command).join(' ');
    for (const app of NEST_APPS) expect(script).toContain(app);
    expect(script).toMatch(/cli\.js"? migrate/);
    expect(script.indexOf(' migrate')).toBeLessThan(script.indexOf(' seed'));
    expect(services.migrate.restart).toBe('no');
    expect(env('migrate').APP_ENV).toBe('sandbox');
  });

  it.each(NEST_APPS)('runs %s in sandbox mode after healthy backing services and the migrations', (app) => {
    const service = services[app];
    expect(service).toBeDefined();
    expect(service.command).toEqual(['node', `dist/apps/${app}/src/main.js`]);
    expect(env(app).APP_ENV).toBe('sandbox');
    expect(env(app).PORT).toBe(String(DEFAULT_PORTS[app]));
    expect(service.depends_on).toEqual(
      expect.objectContaining({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
        rabbitmq: { condition: 'service_healthy' },
        migrate: { condition: 'service_completed_successfully' },
      }),
    );
    expect(service.healthcheck?.test?.join(' ')).toContain('/readyz');
    expect(service.ports).toBeUndefined();
  });

  it.each(NEST_APPS)(
    'connects %s as its own database role and broker user, limited as `npm start` limits them',
    (app) => {
      const db = new URL(env(app).DATABASE_URL);
      const broker = new URL(env(app).AMQP_URL);
      expect([db.username, broker.username]).toEqual([pgRole(app), amqpUser(app)]);
      // The owner (migrations) and the broker's administrator stay out of the apps.
      expect(db.username).not.toBe(new URL(env('migrate').DATABASE_URL).username);
      const roles = readFileSync(join(ROOT, 'compose', 'postgres-app-roles.sql'), 'utf8');
      expect(roles).toMatch(
        new RegExp(`CREATE ROLE ${pgRole(app)} LOGIN NOINHERIT PASSWORD '${db.password}'`),
      );
      expect(services.migrate.command.join(' ')).toContain(`${app}) echo ${pgRole(app)}`);
      const definitions = JSON.parse(
        readFileSync(join(ROOT, 'compose', 'rabbitmq-definitions.json'), 'utf8'),
      ) as { users: { name: string; tags: string[] }[]; permissions: Record<string, string>[] };
      expect(definitions.users.find((u) => u.name === amqpUser(app))?.tags).toEqual([]);
      const { configure, write, read } = APPS[app].amqp;
      expect(definitions.permissions.filter((p) => p.user === amqpUser(app))).toEqual([
        { user: amqpUser(app), vhost: broker.pathname.slice(1), configure, write, read },
      ]);
    },
  );

  it('publishes the gateway, and only the gateway, on 8080', () => {
    const gateway = services.gateway;
    expect(gateway.build?.target).toBe('gateway');
    expect(gateway.ports).toEqual(['8080:8080']);
    expect(env('gateway').APP_ENV).toBe('sandbox');
    expect(env('gateway').GATEWAY_PORT).toBe('8080');
    for (const app of UPSTREAM_APPS) {
      const variable = `${app.toUpperCase().replace(/-/g, '_')}_UPSTREAMS`;
      expect(env('gateway')[variable]).toBe(`${app}:${DEFAULT_PORTS[app]}`);
    }
    const published = Object.entries(services)
      .filter(([, s]) => s.ports !== undefined)
      .map(([name]) => name);
    expect(published).toEqual(['gateway']);
  });
});
/* eslint-enable @typescript-eslint/no-explicit-any */
