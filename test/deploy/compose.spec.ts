/** docker-compose.yml: the local stack. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PORTS, NEST_APPS } from '@svc/contracts';
import { parse, stringify } from 'yaml';
import { checkTarget } from '../../libs/platform/src/webhooks/webhook-target';
import { APPS, amqpUser, pgRole, topicPermissions } from '../../scripts/lib/credentials.cjs';
import { ROOT, UPSTREAM_APPS } from './k8s-render';
/** promtool, as test/monitoring/rules.spec.ts finds it (`npm test` installs Debian's prometheus). */
function promtoolBinary(): string {
  const found = [process.env.PROMTOOL_BIN, '/usr/bin/promtool', '/usr/local/bin/promtool'].find(
    (c) => c && existsSync(c),
  );
  if (!found)
    throw new Error(
      'promtool not found: `npm test` installs it (apt-get install prometheus), or set PROMTOOL_BIN',
    );
  return found;
}

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
      ) as {
        users: { name: string; tags: string[] }[];
        permissions: Record<string, string>[];
        topic_permissions: Record<string, string>[];
      };
      expect(definitions.users.find((u) => u.name === amqpUser(app))?.tags).toEqual([]);
      const { configure, write, read } = APPS[app].amqp;
      expect(definitions.permissions.filter((p) => p.user === amqpUser(app))).toEqual([
        { user: amqpUser(app), vhost: broker.pathname.slice(1), configure, write, read },
      ]);
      expect(definitions.topic_permissions.filter((p) => p.user === amqpUser(app))).toEqual(
        topicPermissions(app).map((t) => ({ user: amqpUser(app), vhost: broker.pathname.slice(1), ...t })),
      );
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
    // Without a profile; the observability profile's own ports are this machine's only (below).
    const published = Object.entries(services)
      .filter(([, s]) => s.ports !== undefined && s.profiles === undefined)
      .map(([name]) => name);
    expect(published).toEqual(['gateway']);
  });

  it('sends the sandbox partner’s webhooks to a receiver on this machine, which the sandbox guard accepts', async () => {
    const url = new URL(
      env('auth-server').SANDBOX_WEBHOOK_URL.replace(/^\$\{SANDBOX_WEBHOOK_URL:-(.*)\}$/, '$1'),
    );
    expect(url.href).toBe('http://host.docker.internal:8765/webhooks');
    // Every container of the app image knows the name (Docker Desktop has it; Linux needs host-gateway).
    for (const service of [...NEST_APPS, 'migrate'])
      expect({ service, hosts: services[service].extra_hosts }).toEqual({
        service,
        hosts: ['host.docker.internal:host-gateway'],
      });
    // The dispatcher delivers there: the Docker bridge's gateway address is private, allowed in the
    // sandbox for this name only.
    const verdict = await checkTarget(url.href, 'sandbox', async () => ['172.17.0.1']);
    expect(verdict.ok).toBe(true);
    expect((await checkTarget(url.href, 'production', async () => ['172.17.0.1'])).ok).toBe(false);
  });

  describe('observability profile', () => {
    const observability = ['prometheus-rules', 'prometheus', 'grafana', 'gateway-metrics', 'redis-exporter'];

    it('runs Prometheus and Grafana only when asked, published on this machine only', () => {
      for (const name of observability) expect(services[name].profiles).toEqual(['observability']);
      expect(services.prometheus.ports).toEqual(['127.0.0.1:9090:9090']);
      expect(services.grafana.ports).toEqual(['127.0.0.1:3000:3000']);
      for (const name of observability) expect(services[name].image).toMatch(/:v?\d+\.\d+\.\d+$/);
    });

    it('gives Prometheus the production rules, extracted from the PrometheusRule itself', () => {
      const extract = services['prometheus-rules'];
      expect(extract.volumes).toContain(
        './k8s/components/monitoring/prometheus-rules.yaml:/monitoring/prometheus-rules.yaml:ro',
      );
      expect(extract.command.join(' ')).toBe(
        `yq '{"groups": .spec.groups}' /monitoring/prometheus-rules.yaml > /rules/rules.yaml`,
      );
      expect(services.prometheus.depends_on).toEqual({
        'prometheus-rules': { condition: 'service_completed_successfully' },
      });
      const config = parse(readFileSync(join(ROOT, 'compose', 'prometheus.yml'), 'utf8'));
      expect(config.rule_files).toEqual(['/etc/prometheus/rules/rules.yaml']);
      expect(services.prometheus.volumes).toEqual(
        expect.arrayContaining([
          'prometheus-rules:/etc/prometheus/rules:ro',
          './compose/prometheus.yml:/etc/prometheus/prometheus.yml:ro',
        ]),
      );
    });

    it('scrapes every app on its metrics port, labelled as the PodMonitors label them, in a config promtool accepts', () => {
      const config = parse(readFileSync(join(ROOT, 'compose', 'prometheus.yml'), 'utf8'));
      const [job, ...exporters] = config.scrape_configs;
      expect(job).toEqual(expect.objectContaining({ honor_labels: true, metrics_path: '/metrics' }));
      const targets = job.static_configs.map((c: any) => [c.targets, c.labels.app]);
      // The apps set no METRICS_PORT in Compose: the default, 9464, in each container.
      for (const app of NEST_APPS) expect(env(app).METRICS_PORT).toBeUndefined();
      expect(targets).toEqual(expect.arrayContaining(NEST_APPS.map((app) => [[`${app}:9464`], app])));
      expect(targets).toHaveLength(NEST_APPS.length);
      // The exporters of the gateway and of the state Redis, labelled as their PodMonitors label them.
      expect(
        exporters.map((j: any) => [j.static_configs[0].targets, j.static_configs[0].labels.app]),
      ).toEqual([
        [['gateway:4040'], 'gateway'],
        [['redis-exporter:9121'], 'redis'],
      ]);
      // promtool checks the config with the rules the extraction writes ({groups: spec.groups}).
      const dir = mkdtempSync(join(tmpdir(), 'crew-compose-prom-'));
      try {
        const rule = parse(
          readFileSync(join(ROOT, 'k8s/components/monitoring/prometheus-rules.yaml'), 'utf8'),
        );
        writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: rule.spec.groups }));
        writeFileSync(
          join(dir, 'prometheus.yml'),
          stringify({ ...config, rule_files: [join(dir, 'rules.yaml')] }),
        );
        const res = spawnSync(promtoolBinary(), ['check', 'config', join(dir, 'prometheus.yml')], {
          encoding: 'utf8',
        });
        expect({ status: res.status, out: res.stdout + res.stderr }).toEqual({
          status: 0,
          out: expect.stringContaining('SUCCESS'),
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('runs the gateway’s metrics exporter as in k8s: in the gateway’s network, with the same configuration', () => {
      const exporter = services['gateway-metrics'];
      expect(exporter.network_mode).toBe('service:gateway');
      expect(exporter.volumes).toEqual([
        './k8s/base/gateway-metrics.hcl:/etc/gateway-metrics/gateway-metrics.hcl:ro',
      ]);
      expect(exporter.command).toEqual(['-config-file', '/etc/gateway-metrics/gateway-metrics.hcl']);
      const hcl = readFileSync(join(ROOT, 'k8s', 'base', 'gateway-metrics.hcl'), 'utf8');
      expect(hcl).toContain(`listen_address = "udp://${env('gateway').GATEWAY_METRICS_SYSLOG}"`);
      expect(hcl).toMatch(/port = 4040/);
      expect(services['redis-exporter'].environment.REDIS_ADDR).toBe('redis://redis:6379');
    });

    it('gives Grafana the production dashboard and Prometheus as its data source', () => {
      expect(services.grafana.volumes).toEqual(
        expect.arrayContaining([
          './k8s/components/monitoring/dashboard.json:/var/lib/grafana/dashboards/crew-records-overview.json:ro',
        ]),
      );
      const sources = parse(readFileSync(join(ROOT, 'compose', 'grafana', 'datasources.yaml'), 'utf8'));
      expect(sources.datasources).toEqual([
        expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090', isDefault: true }),
      ]);
      const providers = parse(readFileSync(join(ROOT, 'compose', 'grafana', 'dashboards.yaml'), 'utf8'));
      expect(providers.providers[0].options.path).toBe('/var/lib/grafana/dashboards');
    });
  });
});
/* eslint-enable @typescript-eslint/no-explicit-any */
