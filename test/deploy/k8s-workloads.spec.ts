/** The apps' Deployments, Services, probes, resources, images, scaling and migrations. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { nodeOptionsOf } from '../../scripts/lib/apps.cjs';
import { APP_SCHEMAS, DEFAULT_PORTS, NEST_APPS } from '@svc/contracts';
import { DELIVERIES_QUEUE, EVENTS_QUEUE } from '../../apps/webhook-dispatcher/src/deliveries/webhook-queues';
import {
  ALL_APPS,
  type Container,
  DB_ROLES,
  ENVS,
  HTTP_APPS,
  type K8sObject,
  ROOT,
  SECRET_VARS,
  amqpUrlKey,
  appContainer,
  dbUrlKey,
  renderOverlays,
  selects,
} from './k8s-render';

const renders = renderOverlays();

describe.each(ENVS)('k8s/overlays/%s', (env) => {
  const r = () => renders[env];

  it.each(ALL_APPS)(
    '%s has a Deployment and a Service on its port, with probes, resources and a hardened pod',
    (app) => {
      const deployment = r().get('Deployment', app);
      const pod = deployment.spec.template;
      const container = appContainer(r(), app);
      const port = DEFAULT_PORTS[app];

      // The Service reaches this Deployment's pods on the app's port.
      const service = r().get('Service', app);
      expect(selects({ matchLabels: service.spec.selector }, pod.metadata.labels)).toBe(true);
      expect(selects(deployment.spec.selector, pod.metadata.labels)).toBe(true);
      const http = container.ports.find((p: Container) => p.name === 'http');
      expect(http?.containerPort).toBe(port);
      expect(service.spec.ports).toEqual([expect.objectContaining({ port, targetPort: 'http' })]);

      // Readiness on /readyz (the app's own DB/Redis/RabbitMQ); nginx answers /healthz itself.
      expect(container.readinessProbe?.httpGet).toEqual({
        path: app === 'gateway' ? '/healthz' : '/readyz',
        port: 'http',
      });
      expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });

      for (const kind of ['requests', 'limits']) {
        expect(container.resources?.[kind]).toEqual(
          expect.objectContaining({ cpu: expect.any(String), memory: expect.any(String) }),
        );
      }

      // Non-root, read-only root filesystem, no privilege escalation, no capabilities.
      expect(pod.spec.securityContext.runAsNonRoot).toBe(true);
      expect(pod.spec.securityContext.runAsUser).toBeGreaterThan(0);
      expect(container.securityContext).toEqual(
        expect.objectContaining({
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        }),
      );
      expect(pod.spec.automountServiceAccountToken).toBe(false);
      // Service links would inject e.g. GATEWAY_PORT=tcp://… into the processes' environment.
      expect(pod.spec.enableServiceLinks).toBe(false);

      // Drain: a preStop pause so the endpoint is gone before SIGTERM, inside a ~30 s grace period.
      const grace = pod.spec.terminationGracePeriodSeconds;
      expect(grace).toBeGreaterThanOrEqual(25);
      expect(grace).toBeLessThanOrEqual(60);
      const preStop = container.lifecycle?.preStop?.exec?.command;
      expect(preStop?.[0]).toBe('sleep');
      const pause = Number(preStop?.[1]);
      expect(pause).toBeGreaterThanOrEqual(2);
      if (app !== 'gateway') {
        const drainMs = Number(r().envValue(container, 'SHUTDOWN_TIMEOUT_MS') ?? 25000);
        expect(pause + drainMs / 1000).toBeLessThan(grace);
      }

      // The HPA or KEDA owns the replica count; a fixed count would fight it on every apply.
      expect(deployment.spec.replicas).toBeUndefined();
    },
  );

  it.each(NEST_APPS)('%s runs its own entry point and gets its secrets by reference', (app) => {
    const container = appContainer(r(), app);
    expect(container.command).toEqual(['node', `dist/apps/${app}/src/main.js`]);
    expect(r().envValue(container, 'PORT')).toBe(String(DEFAULT_PORTS[app]));
    // Prometheus scrapes a named port of its own, which no Service exposes (the gateway never sees it).
    const metrics = container.ports.find((p: Container) => p.name === 'metrics');
    expect(metrics?.containerPort).toBe(Number(r().envValue(container, 'METRICS_PORT')));
    expect(metrics?.containerPort).not.toBe(DEFAULT_PORTS[app]);
    expect(
      r()
        .get('Service', app)
        .spec.ports.map((p: Container) => p.targetPort),
    ).toEqual(['http']);

    // The app's config (apps/<app>/src/config.ts) decides which connections it needs.
    const source = readFileSync(join(ROOT, 'apps', app, 'src', 'config.ts'), 'utf8');
    const needs: Record<string, boolean> = {
      DATABASE_URL: source.includes('DATABASE_CONFIG'),
      REDIS_URL: source.includes('REDIS_CONFIG'),
      AMQP_URL: source.includes('AMQP_CONFIG'),
      INTERNAL_API_TOKEN: source.includes('INTERNAL_API_TOKEN'),
      SECRETS_ENCRYPTION_KEY: source.includes('SECRETS_ENCRYPTION_KEY'),
      CURSOR_SIGNING_KEY: source.includes('CURSOR_SIGNING_KEY'),
    };
    // Production finds Redis through the Sentinels (config) with the password of redis-auth.
    const sentinels = env === 'production';
    for (const name of SECRET_VARS) {
      const value = r().envValue(container, name);
      if (name === 'DATABASE_URL' && needs[name])
        expect(value).toEqual({ secret: 'crew-record-secrets', key: dbUrlKey(app) });
      else if (name === 'AMQP_URL' && needs[name])
        expect(value).toEqual({ secret: 'crew-record-secrets', key: amqpUrlKey(app) });
      else if (name === 'REDIS_URL' && sentinels) expect(value).toBeUndefined();
      else if (needs[name]) expect(value).toEqual({ secret: 'crew-record-secrets', key: name });
      else expect(value).toBeUndefined();
    }
    if (needs.REDIS_URL && sentinels) {
      expect(r().envValue(container, 'REDIS_PASSWORD')).toEqual({ secret: 'redis-auth', key: 'password' });
      expect(r().envValue(container, 'REDIS_SENTINELS')).toMatch(/^[\w.-]+:\d+(,[\w.-]+:\d+)*$/);
      expect(r().envValue(container, 'REDIS_SENTINEL_MASTER')).toBe('mymaster');
    }
  });

  it(`runs every process with APP_ENV=${env}`, () => {
    for (const { owner, spec } of r().podTemplates()) {
      if (['redis', 'redis-cache'].includes(owner.metadata.labels?.['app.kubernetes.io/name'] ?? ''))
        continue;
      for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
        // Neither runs the app's code: a log line, and a look at the migrations table.
        if (owner.kind === 'Job' && c.name === 'done') continue;
        if (c.name === 'wait-for-migrations') continue;
        // The gateway's metrics exporter is not the service's code.
        if (c.name === 'metrics-exporter') continue;
        expect({
          container: `${owner.kind}/${owner.metadata.name}/${c.name}`,
          APP_ENV: r().envValue(c, 'APP_ENV'),
        }).toEqual({
          container: `${owner.kind}/${owner.metadata.name}/${c.name}`,
          APP_ENV: env,
        });
      }
    }
  });

  it('uses one image reference per app, tagged, for its Deployment and its migration steps', () => {
    for (const app of ALL_APPS) {
      expect(appContainer(r(), app).image).toMatch(new RegExp(`/crew-record-service/${app}:[\\w.-]+$`));
    }
    const job = r().get('Job', 'migrations');
    for (const c of job.spec.template.spec.initContainers) {
      const app = /^(?:migrate|seed)-(.+)$/.exec(c.name)?.[1];
      expect(c.image).toMatch(new RegExp(`/crew-record-service/${app}:[\\w.-]+$`));
    }
  });

  it('pins every image to an exact release: no image without a tag, no latest', () => {
    const images: { where: string; image: string }[] = [];
    for (const { owner, spec } of r().podTemplates())
      for (const c of [...(spec.initContainers ?? []), ...spec.containers])
        images.push({ where: `${owner.kind}/${owner.metadata.name}/${c.name}`, image: c.image });
    images.push({ where: 'Cluster/postgres', image: r().get('Cluster', 'postgres').spec.imageName });
    images.push({
      where: 'RabbitmqCluster/rabbitmq',
      image: r().get('RabbitmqCluster', 'rabbitmq').spec.image,
    });
    for (const pooler of r().all('Pooler'))
      for (const c of pooler.spec.template?.spec?.containers ?? [])
        images.push({ where: `Pooler/${pooler.metadata.name}/${c.name}`, image: c.image });
    expect(images.length).toBeGreaterThan(15);
    const unpinned = images.filter(({ image }) => {
      // A digest pins whatever the tag (kustomize's `digest:` renders name@sha256:… without one).
      if (/@sha256:[0-9a-f]{64}$/.test(image ?? '')) return false;
      const tag = /:([^:/@]+)$/.exec(image ?? '')?.[1];
      // A version tag: digits and dots first (16.8, 1.24.1, 4.1.1-management, 7.4.2-alpine, 1.0.0).
      return tag === undefined || tag === 'latest' || !/^v?\d+(\.\d+)+([-.][\w.-]+)?$/.test(tag);
    });
    expect(unpinned).toEqual([]);
  });

  it('scales every HTTP app on CPU with an autoscaling/v2 HPA and the webhook-dispatcher with KEDA', () => {
    for (const app of HTTP_APPS) {
      const hpa = r().get('HorizontalPodAutoscaler', app);
      expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: app });
      expect(hpa.spec.metrics).toContainEqual({
        type: 'Resource',
        resource: { name: 'cpu', target: expect.objectContaining({ type: 'Utilization' }) },
      });
      expect(hpa.spec.minReplicas).toBeLessThanOrEqual(hpa.spec.maxReplicas);
    }
    // KEDA makes its own HPA for the dispatcher; a second one would fight it.
    const hpaTargets = r()
      .all('HorizontalPodAutoscaler')
      .map((h) => h.spec.scaleTargetRef.name);
    expect(hpaTargets).not.toContain('webhook-dispatcher');

    const scaled = r().get('ScaledObject', 'webhook-dispatcher');
    expect(scaled.apiVersion).toBe('keda.sh/v1alpha1');
    expect(scaled.spec.scaleTargetRef).toEqual(
      expect.objectContaining({ kind: 'Deployment', name: 'webhook-dispatcher' }),
    );
    expect(scaled.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(scaled.spec.maxReplicaCount).toBeGreaterThan(scaled.spec.minReplicaCount);
    // The queues the dispatcher works, as its topology declares them: the first attempt of every
    // event (webhooks.events) and every delivery attempt, retries included once their delay is
    // over (webhooks.deliveries). Not the retry queues, whose messages cannot be worked yet.
    const triggers: Container[] = scaled.spec.triggers;
    expect(triggers.every((t) => t.type === 'rabbitmq')).toBe(true);
    expect(triggers.map((t) => t.metadata.queueName).sort()).toEqual([DELIVERIES_QUEUE, EVENTS_QUEUE].sort());
    expect(EVENTS_QUEUE).toBe('webhooks.events');
    for (const trigger of triggers) {
      expect(trigger.metadata).toEqual(expect.objectContaining({ mode: 'QueueLength', protocol: 'amqp' }));
      expect(Number(trigger.metadata.value)).toBeGreaterThan(0);
      // No inline host or password: the connection comes from the TriggerAuthentication by reference.
      expect(trigger.metadata.host).toBeUndefined();
      const auth = r().get('TriggerAuthentication', trigger.authenticationRef.name);
      expect(auth.spec.secretTargetRef).toEqual([
        { parameter: 'host', name: 'crew-record-secrets', key: amqpUrlKey('webhook-dispatcher') },
      ]);
    }
  });

  it('gives every app a PodDisruptionBudget that lets one pod go at a time', () => {
    for (const app of ALL_APPS) {
      const labels = r().get('Deployment', app).spec.template.metadata.labels;
      const pdbs = r()
        .all('PodDisruptionBudget')
        .filter((p) => selects(p.spec.selector, labels));
      expect(pdbs.map((p) => p.metadata.name)).toEqual([app]);
      // maxUnavailable, not minAvailable: a one-replica sandbox must not block node drains.
      expect(pdbs[0].spec.maxUnavailable).toBe(1);
    }
  });

  it('runs every app’s migrations one after another in a Job, and seeds only in sandbox', () => {
    const job = r().get('Job', 'migrations');
    expect(job.apiVersion).toBe('batch/v1');
    const steps: Container[] = job.spec.template.spec.initContainers;
    const commands = steps.map((c) => c.command.join(' '));
    const migrates = NEST_APPS.map((app) => commands.indexOf(`node dist/apps/${app}/src/cli.js migrate`));
    expect(migrates.every((i) => i >= 0)).toBe(true);
    const seeds = NEST_APPS.map((app) => commands.indexOf(`node dist/apps/${app}/src/cli.js seed`));
    const allCommands = [
      ...commands,
      ...job.spec.template.spec.containers.map((c: Container) => c.command.join(' ')),
    ];
    if (env === 'sandbox') {
      expect(seeds.every((i) => i >= 0)).toBe(true);
      expect(Math.min(...seeds)).toBeGreaterThan(Math.max(...migrates));
    } else {
      expect(allCommands.filter((c) => c.includes(' seed'))).toEqual([]);
    }
    for (const c of steps)
      expect(r().envValue(c, 'DATABASE_URL')).toEqual({
        secret: 'crew-record-secrets',
        key: 'DATABASE_URL',
      });
    // Each migration step grants the app's own role its schema (and nothing else).
    for (const app of NEST_APPS) {
      const step = steps[migrates[NEST_APPS.indexOf(app)]];
      expect([app, r().envValue(step, 'DATABASE_APP_ROLE')]).toEqual([app, DB_ROLES[app]]);
    }
    expect(job.spec.template.spec.restartPolicy).toBe('Never');
    expect(job.spec.backoffLimit).toBeGreaterThan(0);
  });

  it('re-runs the migrations Job on every release, before the Deployments roll (Argo CD, Flux)', () => {
    const job = r().get('Job', 'migrations');
    const annotations = job.metadata.annotations ?? {};
    // Argo CD: deleted and re-created at every sync, as a Sync-phase hook (not PreSync: it reads the
    // hashed ConfigMap that the Sync phase creates) in a wave after the config and before the apps.
    expect(annotations['argocd.argoproj.io/hook']).toBe('Sync');
    expect(annotations['argocd.argoproj.io/hook-delete-policy']).toBe('BeforeHookCreation');
    const wave = (o: K8sObject) => Number(o.metadata.annotations?.['argocd.argoproj.io/sync-wave'] ?? 0);
    for (const kind of [
      'ConfigMap',
      'Secret',
      'Service',
      'Cluster',
      'Pooler',
      'RabbitmqCluster',
      'StatefulSet',
    ])
      for (const o of r().all(kind))
        expect({ o: `${kind}/${o.metadata.name}`, before: wave(o) < wave(job) }).toEqual({
          o: `${kind}/${o.metadata.name}`,
          before: true,
        });
    for (const d of r().all('Deployment')) expect(wave(d)).toBeGreaterThan(wave(job));
    // Flux: an immutable pod template that changed (new image tags) replaces the Job.
    expect(annotations['kustomize.toolkit.fluxcd.io/force']).toBe('enabled');
    // A Job that expired would be re-created by a GitOps tool, and migrate again.
    expect(job.spec.ttlSecondsAfterFinished).toBeUndefined();
  });

  it.each(NEST_APPS)(
    '%s serves only once its migrations are applied (wait-for-migrations init container)',
    (app) => {
      const deployment = r().get('Deployment', app);
      const pod = deployment.spec.template.spec;
      const wait = (pod.initContainers ?? []).find((c: Container) => c.name === 'wait-for-migrations');
      expect(wait).toBeDefined();
      // The app's own image, so the list of migrations is the one of the code about to serve.
      expect(wait.image).toBe(appContainer(r(), app).image);
      expect(wait.command).toEqual([
        'node',
        '/opt/wait-for-migrations/wait-for-migrations.js',
        app,
        APP_SCHEMAS[app],
      ]);
      expect(r().envValue(wait, 'DATABASE_URL')).toEqual(
        r().envValue(appContainer(r(), app), 'DATABASE_URL'),
      );
      const mount = wait.volumeMounts.find((m: Container) => m.mountPath === '/opt/wait-for-migrations');
      const volume = pod.volumes.find((v: Container) => v.name === mount.name);
      expect(r().configMap(volume.configMap.name)?.data?.['wait-for-migrations.js']).toContain(
        'dist/apps/${app}/src/migrations/index.js',
      );
      expect(wait.securityContext).toEqual(
        expect.objectContaining({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false }),
      );
      // The Job migrates what the init container waits for.
      const commands = r()
        .get('Job', 'migrations')
        .spec.template.spec.initContainers.map((c: Container) => c.command.join(' '));
      expect(commands).toContain(`node dist/apps/${app}/src/cli.js migrate`);
    },
  );
});

describe('Node options of the apps', () => {
  const r = () => renders.base;
  const compose = () =>
    parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { environment?: Record<string, string> }>;
    };
  const megabytes = (options: string, flag: string) =>
    Number(new RegExp(`--${flag}=(\\d+)`).exec(options)?.[1] ?? NaN);
  const mebibytes = (quantity: string) => {
    const [, n, unit] = /^(\d+)(Mi|Gi)$/.exec(quantity) ?? [];
    return Number(n) * (unit === 'Gi' ? 1024 : 1);
  };

  it.each(NEST_APPS)(
    '%s: its heaps (old space and two young semi-spaces) fit its memory limit, and compose and the scripts run the same options',
    (app) => {
      const container = appContainer(r(), app);
      const options = r().envValue(container, 'NODE_OPTIONS');
      expect(typeof options).toBe('string');
      const heap =
        megabytes(options as string, 'max-old-space-size') +
        2 * megabytes(options as string, 'max-semi-space-size');
      // Room beside the heap for code, buffers and the native side.
      expect(heap).toBeLessThanOrEqual(mebibytes(container.resources.limits.memory) - 96);
      expect(compose().services[app].environment?.NODE_OPTIONS).toBe(options);
      expect(nodeOptionsOf(app)).toBe(options);
    },
  );
});
