/** PostgreSQL (pooler, connection limits, backups), RabbitMQ and Redis. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { APP_SCHEMAS, NEST_APPS } from '@svc/contracts';
import {
  BACKUP_SECRET,
  type Container,
  DB_ROLES,
  ENVS,
  POOLER,
  ROOT,
  appContainer,
  renderOverlays,
  selects,
} from './k8s-render';

const renders = renderOverlays();

describe.each(ENVS)('k8s/overlays/%s', (env) => {
  const r = () => renders[env];

  it('runs PostgreSQL, RabbitMQ and Redis as the documented operator resources and StatefulSet', () => {
    const postgres = r().get('Cluster', 'postgres');
    expect(postgres.apiVersion).toBe('postgresql.cnpg.io/v1');
    const rabbit = r().get('RabbitmqCluster', 'rabbitmq');
    expect(rabbit.apiVersion).toBe('rabbitmq.com/v1beta1');
    expect(rabbit.spec.replicas).toBe(env === 'production' ? 3 : 1);
    expect(postgres.spec.instances).toBe(env === 'production' ? 3 : 1);
    const redis = r().get('StatefulSet', 'redis');
    expect(redis.spec.replicas).toBe(env === 'production' ? 3 : 1);
    expect(redis.spec.template.spec.containers[0].image).toMatch(/^redis:7\.\d+\.\d+/);
    expect(r().get('Service', 'redis').spec.ports[0].port).toBe(6379);
  });

  it('runs the state Redis with noeviction and the token cache’s own Redis with allkeys-lru', () => {
    const state =
      env === 'production'
        ? readFileSync(join(ROOT, 'k8s', 'components', 'redis-sentinel', 'redis.sh'), 'utf8')
        : (r().get('StatefulSet', 'redis').spec.template.spec.containers[0].command ?? []).join(' ');
    expect(state).toMatch(/--maxmemory-policy noeviction\b/);
    const cache = r().get('StatefulSet', 'redis-cache');
    expect(cache.spec.replicas).toBe(1);
    expect(cache.spec.template.spec.containers[0].command.join(' ')).toMatch(
      /--maxmemory-policy allkeys-lru\b/,
    );
    expect(r().get('Service', 'redis-cache').spec.ports[0].port).toBe(6379);
    for (const app of ['auth-server', 'crew-api', 'sponsorship-api'] as const) {
      expect(r().envValue(appContainer(r(), app), 'REDIS_CACHE_URL')).toEqual({
        secret: 'crew-record-secrets',
        key: 'REDIS_CACHE_URL',
      });
    }
  });

  it('puts the apps on a PgBouncer pooler in transaction mode, each app as its own role with its session settings', () => {
    const pooler = r().get('Pooler', POOLER);
    const cnpg = r().get('Cluster', 'postgres');
    expect(pooler.spec.cluster.name).toBe('postgres');
    expect(pooler.spec.type).toBe('rw');
    // Transaction pooling is safe because nothing in the apps needs a session across transactions:
    // no named prepared statements, no LISTEN, no session advisory lock outside the migrations.
    expect(pooler.spec.pgbouncer.poolMode).toBe('transaction');
    // crew-api and the dispatcher run named prepared statements (`Sql.prepared`): PgBouncer must be
    // 1.21+ and track them, or they fail on the next server connection.
    const named = NEST_APPS.filter((app) => {
      const dir = join(ROOT, 'apps', app, 'src');
      return readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts') && !f.endsWith('spec.ts'))
        .some((f) => /\.prepared(<[^>]*>)?\(/.test(readFileSync(join(dir, f), 'utf8')));
    });
    expect(named.length).toBeGreaterThan(0);
    expect(Number(pooler.spec.pgbouncer.parameters.max_prepared_statements)).toBeGreaterThanOrEqual(100);
    const [major, minor] = (
      /pgbouncer:(\d+)\.(\d+)/.exec(pooler.spec.template.spec.containers[0].image) ?? []
    )
      .slice(1)
      .map(Number);
    expect(major * 100 + minor).toBeGreaterThanOrEqual(121);
    const roles = (cnpg.spec.managed?.roles ?? []).map((role: Container) => role.name).sort();
    expect(roles).toEqual(NEST_APPS.map((app) => DB_ROLES[app]).sort());
    const sql: string[] = cnpg.spec.bootstrap.initdb.postInitApplicationSQL;
    for (const app of NEST_APPS) {
      const role = DB_ROLES[app];
      // Not a member of the owner: that would open every app's schema to it.
      const managed = cnpg.spec.managed.roles.find((x: Container) => x.name === role);
      expect(managed).toEqual(expect.objectContaining({ login: true, inherit: false }));
      expect(managed.inRoles ?? []).toEqual([]);
      // What the apps send as the `options` startup parameter, which PgBouncer drops.
      expect(sql).toContain(
        `ALTER ROLE ${role} IN DATABASE ${cnpg.spec.bootstrap.initdb.database} SET search_path = ${APP_SCHEMAS[app]}, public`,
      );
      expect(sql).toContain(`ALTER ROLE ${role} SET statement_timeout = '3s'`);
      expect(sql).toContain(`ALTER ROLE ${role} SET lock_timeout = '2s'`);
    }
    expect(r().get('PodDisruptionBudget', POOLER).spec.selector.matchLabels).toEqual({
      'cnpg.io/poolerName': POOLER,
    });
    expect(pooler.spec.instances).toBe(env === 'production' ? 3 : 1);
  });

  it('keeps every connection inside the pooler and PostgreSQL limits at the maximum scale', () => {
    // Clients: every replica the HPAs and KEDA may run × DATABASE_POOL_SIZE, for each app with a database.
    let clients = 0;
    for (const app of NEST_APPS) {
      const maxReplicas =
        app === 'webhook-dispatcher'
          ? r().get('ScaledObject', app).spec.maxReplicaCount
          : r().get('HorizontalPodAutoscaler', app).spec.maxReplicas;
      const poolSize = Number(r().envValue(appContainer(r(), app), 'DATABASE_POOL_SIZE'));
      expect(poolSize).toBeGreaterThan(0);
      clients += maxReplicas * poolSize;
    }
    const params = r().get('Pooler', POOLER).spec.pgbouncer.parameters;
    const instances = r().get('Pooler', POOLER).spec.instances;
    const maxClientConn = Number(params.max_client_conn);
    const defaultPoolSize = Number(params.default_pool_size);
    const maxDbConnections = Number(params.max_db_connections);
    const reserve = Number(params.reserve_pool_size ?? 0);
    // The Service may send every client to the same PgBouncer instance.
    expect(clients).toBeLessThanOrEqual(maxClientConn);
    // One pool per (role, database): the app roles' pools fill max_db_connections exactly.
    expect(NEST_APPS.length * (defaultPoolSize + reserve)).toBeLessThanOrEqual(maxDbConnections);
    // Server side: every PgBouncer instance at max_db_connections, plus the migrations Job (one step
    // at a time, its pool), plus superuser_reserved_connections (3) and 20 for the operator and humans.
    const migrations = Number(
      r().configMap(
        r().get('Job', 'migrations').spec.template.spec.initContainers[0].envFrom[0].configMapRef.name,
      )?.data?.DATABASE_POOL_SIZE,
    );
    const maxConnections = Number(r().get('Cluster', 'postgres').spec.postgresql.parameters.max_connections);
    expect(instances * maxDbConnections + migrations + 3 + 20).toBeLessThanOrEqual(maxConnections);
    // The figures k8s/README.md quotes.
    if (env === 'production')
      expect({ clients, server: instances * maxDbConnections }).toEqual({ clients: 600, server: 150 });
  });

  it(
    env === 'production'
      ? 'archives WAL and takes daily base backups to an object store (PITR)'
      : 'takes no backups (sandbox data is seeded)',
    () => {
      const cnpg = r().get('Cluster', 'postgres');
      const scheduled = r().all('ScheduledBackup');
      if (env !== 'production') {
        expect(cnpg.spec.backup).toBeUndefined();
        expect(scheduled).toEqual([]);
        return;
      }
      const store = cnpg.spec.backup.barmanObjectStore;
      expect(cnpg.spec.backup.retentionPolicy).toMatch(/^\d+d$/);
      expect(store.destinationPath).toMatch(/^(s3|gs|https):\/\//);
      expect(store.s3Credentials.accessKeyId).toEqual({ name: BACKUP_SECRET, key: expect.any(String) });
      expect(store.s3Credentials.secretAccessKey).toEqual({ name: BACKUP_SECRET, key: expect.any(String) });
      expect(store.wal).toBeDefined();
      expect(scheduled).toHaveLength(1);
      expect(scheduled[0].spec).toEqual(
        expect.objectContaining({
          cluster: { name: 'postgres' },
          method: 'barmanObjectStore',
          immediate: true,
        }),
      );
    },
  );

  it(
    env === 'production'
      ? 'runs Redis as a master with two replicas and three Sentinels, spread over nodes'
      : 'runs one Redis instance',
    () => {
      const redis = r().get('StatefulSet', 'redis');
      if (env !== 'production') {
        expect(r().find('StatefulSet', 'redis-sentinel')).toBeUndefined();
        return;
      }
      const sentinel = r().get('StatefulSet', 'redis-sentinel');
      expect(sentinel.spec.replicas).toBe(3);
      for (const set of [redis, sentinel]) {
        const labels = set.spec.template.metadata.labels;
        // One per node, and a drain takes one at a time.
        const anti =
          set.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution;
        expect(anti).toEqual([expect.objectContaining({ topologyKey: 'kubernetes.io/hostname' })]);
        expect(selects(anti[0].labelSelector, labels)).toBe(true);
        const pdbs = r()
          .all('PodDisruptionBudget')
          .filter((p) => selects(p.spec.selector, labels));
        expect(pdbs.map((p) => p.spec.maxUnavailable)).toEqual([1]);
        expect(set.spec.template.spec.containers[0].image).toBe(redis.spec.template.spec.containers[0].image);
        // The Services are headless, so pod names resolve: <pod>.<service>.
        expect(r().get('Service', set.spec.serviceName).spec.clusterIP).toBe('None');
      }
      // The apps' Sentinel list names exactly the Sentinel pods, on their port.
      const config = r().envValue(appContainer(r(), 'crew-api'), 'REDIS_SENTINELS') as string;
      const port = r().get('Service', sentinel.spec.serviceName).spec.ports[0].port;
      expect(config.split(',')).toEqual(
        [0, 1, 2].map((i) => `${sentinel.metadata.name}-${i}.${sentinel.spec.serviceName}:${port}`),
      );
      // The scripts monitor the master the apps ask for.
      const scripts = r().configMap(
        sentinel.spec.template.spec.volumes.find((v: Container) => v.configMap).configMap.name,
      );
      expect(scripts?.data?.['sentinel.sh']).toMatch(/sentinel monitor \$REDIS_SENTINEL_MASTER/);
      expect(scripts?.data?.['redis.sh']).toMatch(/--replicaof/);
    },
  );
});
