/** Who may talk to whom: the NetworkPolicies, evaluated for each pair of pods. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_PORTS, NEST_APPS } from '@svc/contracts';
import {
  ALL_APPS,
  type Container,
  type Destination,
  ENVS,
  NON_PUBLIC_RANGES,
  OPERATOR_NAMESPACES,
  POOLER,
  type Peer,
  ROOT,
  UPSTREAM_APPS,
  allowedEgress,
  allowedPorts,
  appContainer,
  renderOverlays,
} from './k8s-render';

const renders = renderOverlays();

describe.each(ENVS)('k8s/overlays/%s', (env) => {
  const r = () => renders[env];

  describe('network policies', () => {
    const podLabels = (app: string): Record<string, string> => {
      if (app === 'postgres') return { 'cnpg.io/cluster': 'postgres' }; // set by CloudNativePG on its pods
      if (app === 'rabbitmq') return { 'app.kubernetes.io/name': 'rabbitmq' }; // set by the RabbitMQ operator
      if (app === 'pooler')
        return { ...r().get('Pooler', POOLER).spec.template.metadata.labels, 'cnpg.io/poolerName': POOLER }; // set by CloudNativePG
      if (app === 'redis-sentinel')
        return r().get('StatefulSet', 'redis-sentinel').spec.template.metadata.labels;
      if (app === 'migrations') return r().get('Job', 'migrations').spec.template.metadata.labels;
      if (app === 'redis') return r().get('StatefulSet', 'redis').spec.template.metadata.labels;
      return r().get('Deployment', app).spec.template.metadata.labels;
    };
    const pod = (app: string): Peer => ({ kind: 'pod', labels: podLabels(app) });
    const outside: Peer = { kind: 'outside' };
    const anyNamespace: Peer = { kind: 'namespace', name: 'some-other-namespace' };

    it('deny all ingress by default', () => {
      const denyAll = r()
        .all('NetworkPolicy')
        .filter(
          (p) =>
            Object.keys(p.spec.podSelector).length === 0 &&
            p.spec.policyTypes.includes('Ingress') &&
            !p.spec.ingress,
        );
      expect(denyAll).toHaveLength(1);
    });

    it('let only the gateway be reached from outside, on 8080', () => {
      expect([...allowedPorts(r(), podLabels('gateway'), outside)]).toEqual([8080]);
      for (const target of [...NEST_APPS, 'migrations', 'postgres', 'pooler', 'rabbitmq', 'redis']) {
        expect({
          target,
          outside: [...allowedPorts(r(), podLabels(target), outside)],
          otherNamespace: [...allowedPorts(r(), podLabels(target), anyNamespace)],
        }).toEqual({
          target,
          outside: [],
          otherNamespace: [],
        });
      }
    });

    it('let the HTTP apps (the webhook-dispatcher too, for the partners’ webhook routes) be reached from the gateway only', () => {
      for (const app of UPSTREAM_APPS) {
        expect(allowedPorts(r(), podLabels(app), pod('gateway')).has(DEFAULT_PORTS[app])).toBe(true);
        for (const other of [...NEST_APPS, 'migrations', 'redis', 'rabbitmq', 'postgres', 'pooler']) {
          expect({ app, from: other, ports: [...allowedPorts(r(), podLabels(app), pod(other))] }).toEqual({
            app,
            from: other,
            ports: [],
          });
        }
      }
      for (const from of NEST_APPS) {
        expect([...allowedPorts(r(), podLabels('webhook-dispatcher'), pod(from))]).toEqual([]);
      }
    });

    it('let the monitoring namespace scrape every app on its metrics port and reach nothing else', () => {
      const monitoring: Peer = { kind: 'namespace', name: 'monitoring' };
      for (const app of NEST_APPS) {
        const metrics = appContainer(r(), app).ports.find((p: Container) => p.name === 'metrics');
        expect({ app, ports: [...allowedPorts(r(), podLabels(app), monitoring)] }).toEqual({
          app,
          ports: [metrics?.containerPort],
        });
        expect(allowedPorts(r(), podLabels(app), monitoring).has(DEFAULT_PORTS[app])).toBe(false);
      }
      // The exporters of the backing services and of the gateway: their metrics port only, in the
      // overlay that has the monitoring component (production); nothing in the sandbox.
      const exporterPorts: Record<string, number> = {
        postgres: 9187,
        pooler: 9127,
        rabbitmq: 15692,
        redis: 9121,
        gateway: 4040,
      };
      for (const target of ['migrations', 'postgres', 'pooler', 'rabbitmq', 'redis', 'gateway']) {
        const expected = env === 'production' && exporterPorts[target] ? [exporterPorts[target]] : [];
        expect({ target, ports: [...allowedPorts(r(), podLabels(target), monitoring)] }).toEqual({
          target,
          ports: target === 'gateway' ? [8080, ...expected] : expected,
        });
      }
      // The gateway's upstreams are the API ports only: it cannot reach a metrics port.
      for (const app of NEST_APPS) {
        const metrics = appContainer(r(), app).ports.find((p: Container) => p.name === 'metrics');
        expect(allowedPorts(r(), podLabels(app), pod('gateway')).has(metrics?.containerPort)).toBe(false);
      }
    });

    it('let the backing services be reached by the apps that use them (and their operators), not by the gateway', () => {
      for (const app of NEST_APPS) {
        const source = readFileSync(join(ROOT, 'apps', app, 'src', 'config.ts'), 'utf8');
        // PostgreSQL through the pooler only.
        expect(allowedPorts(r(), podLabels('pooler'), pod(app)).has(5432)).toBe(
          source.includes('DATABASE_CONFIG'),
        );
        expect([...allowedPorts(r(), podLabels('postgres'), pod(app))]).toEqual([]);
        expect(allowedPorts(r(), podLabels('rabbitmq'), pod(app)).has(5672)).toBe(
          source.includes('AMQP_CONFIG'),
        );
        expect(allowedPorts(r(), podLabels('redis'), pod(app)).has(6379)).toBe(
          source.includes('REDIS_CONFIG'),
        );
      }
      expect(allowedPorts(r(), podLabels('postgres'), pod('migrations')).has(5432)).toBe(true);
      expect(allowedPorts(r(), podLabels('postgres'), pod('pooler')).has(5432)).toBe(true);
      for (const service of ['postgres', 'pooler', 'rabbitmq', 'redis']) {
        expect({
          service,
          fromGateway: [...allowedPorts(r(), podLabels(service), pod('gateway'))],
        }).toEqual({
          service,
          fromGateway: [],
        });
        if (service !== 'pooler')
          expect(allowedPorts(r(), podLabels(service), pod(service)).has('any')).toBe(false);
      }
      if (env === 'production') {
        // Sentinels: reached by the apps, and watching the data pods.
        for (const app of ['auth-server', 'crew-api', 'sponsorship-api'])
          expect(allowedPorts(r(), podLabels('redis-sentinel'), pod(app)).has(26379)).toBe(true);
        expect(allowedPorts(r(), podLabels('redis'), pod('redis-sentinel')).has(6379)).toBe(true);
        expect(allowedPorts(r(), podLabels('redis-sentinel'), pod('redis')).has(26379)).toBe(true);
      }
      expect(
        allowedPorts(r(), podLabels('postgres'), { kind: 'namespace', name: 'cnpg-system' }).has(5432),
      ).toBe(true);
      expect(allowedPorts(r(), podLabels('rabbitmq'), { kind: 'namespace', name: 'keda' }).has(5672)).toBe(
        true,
      );
      // Namespace-wide admission is reserved for the operators, and for Prometheus on the metrics port.
      for (const policy of r().all('NetworkPolicy')) {
        for (const rule of policy.spec.ingress ?? []) {
          for (const from of rule.from ?? []) {
            if (from.namespaceSelector) {
              expect([...OPERATOR_NAMESPACES, 'monitoring']).toContain(
                from.namespaceSelector.matchLabels?.['kubernetes.io/metadata.name'],
              );
            }
            expect(from.ipBlock).toBeUndefined();
          }
        }
      }
    });

    describe('egress', () => {
      const dns: Destination = { kind: 'dns' };
      const ownPods = [...ALL_APPS, 'migrations'];
      const to = (target: string): Destination => ({ kind: 'pod', labels: podLabels(target) });
      const ports = (from: string, dest: Destination) => {
        const allowed = allowedEgress(r(), podLabels(from), dest);
        return allowed === undefined ? 'unrestricted' : [...allowed].sort((a, b) => Number(a) - Number(b));
      };

      it('restrict every pod of the service, which then reaches DNS and nothing unlisted', () => {
        for (const from of ownPods) {
          expect({ from, dns: ports(from, dns) }).toEqual({ from, dns: [53] });
          // Another namespace's pod, the Kubernetes API, the cloud metadata endpoint: nothing.
          for (const address of ['10.96.0.1', '169.254.169.254', '10.1.2.3'])
            expect({ from, address, ports: ports(from, { kind: 'ip', address }) }).toEqual({
              from,
              address,
              ports: [],
            });
        }
      });

      it('let the webhook-dispatcher reach public addresses on 443 only, never private or cluster ranges', () => {
        for (const address of ['93.184.216.34', '1.1.1.1', '203.0.113.9'])
          expect({ address, ports: ports('webhook-dispatcher', { kind: 'ip', address }) }).toEqual({
            address,
            ports: [443],
          });
        for (const address of [
          '10.0.0.1',
          '172.16.5.4',
          '172.31.255.255',
          '192.168.1.1',
          '169.254.169.254',
          '100.64.0.1',
          '127.0.0.1',
        ])
          expect({ address, ports: ports('webhook-dispatcher', { kind: 'ip', address }) }).toEqual({
            address,
            ports: [],
          });
        const blocks = r()
          .all('NetworkPolicy')
          .flatMap((p) =>
            (p.spec.egress ?? []).flatMap((rule: Container) =>
              (rule.to ?? []).filter((t: Container) => t.ipBlock),
            ),
          );
        expect(blocks).toHaveLength(1);
        for (const range of NON_PUBLIC_RANGES) expect(blocks[0].ipBlock.except).toContain(range);
        // The cluster's own pod and Service CIDRs (placeholders until patched) are excluded too.
        expect(blocks[0].ipBlock.except.length).toBeGreaterThanOrEqual(NON_PUBLIC_RANGES.length + 2);
        // No other pod of the service reaches the internet.
        for (const from of ownPods.filter((a) => a !== 'webhook-dispatcher'))
          expect({ from, ports: ports(from, { kind: 'ip', address: '93.184.216.34' }) }).toEqual({
            from,
            ports: [],
          });
      });

      it('let each app reach exactly its dependencies: the pooler, Redis, RabbitMQ', () => {
        for (const app of NEST_APPS) {
          const source = readFileSync(join(ROOT, 'apps', app, 'src', 'config.ts'), 'utf8');
          const expected = {
            pooler: source.includes('DATABASE_CONFIG') ? [5432] : [],
            postgres: [],
            redis: source.includes('REDIS_CONFIG') ? [6379, 26379] : [],
            rabbitmq: source.includes('AMQP_CONFIG') ? [5672] : [],
            gateway: [],
            ...Object.fromEntries(NEST_APPS.map((other) => [other, []])),
          };
          const actual = Object.fromEntries(
            Object.keys(expected).map((target) => [target, ports(app, to(target))]),
          );
          expect({ app, ...actual }).toEqual({ app, ...expected });
          // Whatever an app may send to, the target admits (the ingress side of the same path).
          for (const [target, open] of Object.entries(expected))
            for (const port of open as number[])
              if (target !== 'redis' || port === 6379 || env === 'production')
                expect({
                  app,
                  target,
                  port,
                  admitted: allowedPorts(r(), podLabels(target), pod(app)).has(port),
                }).toEqual({
                  app,
                  target,
                  port,
                  admitted: true,
                });
        }
      });

      it('let the gateway reach the HTTP apps only, and the migrations Job PostgreSQL directly', () => {
        for (const app of UPSTREAM_APPS)
          expect(ports('gateway', to(app))).toEqual([3001, 3002, 3003, 3004, 3005]);
        for (const target of ['postgres', 'pooler', 'rabbitmq', 'redis'])
          expect({ target, ports: ports('gateway', to(target)) }).toEqual({ target, ports: [] });
        expect(ports('migrations', to('postgres'))).toEqual([5432]);
        expect(allowedPorts(r(), podLabels('postgres'), pod('migrations')).has(5432)).toBe(true);
      });
    });
  });
});
