/** Secrets by reference only, and the sandbox's example Secrets consistent with the backing services. */
import { NEST_APPS } from '@svc/contracts';
import { APPS, amqpUser, topicPermissions } from '../../scripts/lib/credentials.cjs';
import {
  BACKUP_SECRET,
  DB_ROLES,
  ENVS,
  EXTERNAL_SECRETS,
  POOLER,
  SECRET_VARS,
  amqpUrlKey,
  dbUrlKey,
  renderOverlays,
} from './k8s-render';

const renders = renderOverlays();

describe.each(ENVS)('k8s/overlays/%s', (env) => {
  const r = () => renders[env];

  it('keeps secrets out of literal values and ConfigMaps', () => {
    for (const { owner, spec } of r().podTemplates()) {
      for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
        for (const e of c.env ?? []) {
          if ((SECRET_VARS as readonly string[]).includes(e.name) || /PASSWORD/.test(e.name)) {
            expect({ where: `${owner.metadata.name}/${c.name}/${e.name}`, literal: e.value }).toEqual({
              where: `${owner.metadata.name}/${c.name}/${e.name}`,
              literal: undefined,
            });
            expect(e.valueFrom?.secretKeyRef).toBeDefined();
          }
        }
      }
    }
    for (const cm of r().all('ConfigMap')) {
      expect(
        Object.keys(cm.data ?? {}).filter(
          (k) => (SECRET_VARS as readonly string[]).includes(k) || /PASSWORD|SECRET|_TOKEN$/.test(k),
        ),
      ).toEqual([]);
    }
  });

  it(
    env === 'production'
      ? 'renders no Secret: it references the externally managed ones'
      : 'ships example Secrets that every reference resolves to',
    () => {
      const refs: { name: string; key?: string; from: string }[] = [];
      for (const { owner, spec } of r().podTemplates()) {
        for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
          for (const e of c.env ?? []) {
            const ref = e.valueFrom?.secretKeyRef;
            if (ref) refs.push({ name: ref.name, key: ref.key, from: `${owner.metadata.name}/${c.name}` });
          }
        }
      }
      for (const auth of r().all('TriggerAuthentication')) {
        for (const t of auth.spec.secretTargetRef ?? [])
          refs.push({ name: t.name, key: t.key, from: `TriggerAuthentication/${auth.metadata.name}` });
      }
      const cnpg = r().get('Cluster', 'postgres');
      refs.push({
        name: cnpg.spec.bootstrap.initdb.secret.name,
        key: 'password',
        from: 'Cluster/postgres',
      });
      for (const user of r().all('User'))
        refs.push({
          name: user.spec.importCredentialsSecret.name,
          key: 'password',
          from: `User/${user.metadata.name}`,
        });
      for (const role of cnpg.spec.managed?.roles ?? [])
        refs.push({
          name: role.passwordSecret.name,
          key: 'password',
          from: `Cluster/postgres role ${role.name}`,
        });
      const s3 = cnpg.spec.backup?.barmanObjectStore?.s3Credentials ?? {};
      for (const ref of Object.values(s3) as { name: string; key: string }[])
        refs.push({ name: ref.name, key: ref.key, from: 'Cluster/postgres backup' });

      expect(new Set(refs.map((ref) => ref.name))).toEqual(
        new Set([...EXTERNAL_SECRETS, ...(env === 'production' ? [BACKUP_SECRET] : [])]),
      );
      if (env === 'production') {
        expect(r().all('Secret')).toEqual([]);
        expect(r().get('RabbitmqCluster', 'rabbitmq').spec.rabbitmq?.additionalConfig ?? '').not.toMatch(
          /default_(user|pass)/,
        );
      } else {
        const missing = refs.filter((ref) => {
          const secret = r().find('Secret', ref.name);
          return (
            !secret ||
            ref.key === undefined ||
            !({ ...secret.data, ...secret.stringData } as Record<string, string>)[ref.key]
          );
        });
        expect(missing).toEqual([]);
        expect(r().get('Secret', 'postgres-app-credentials').type).toBe('kubernetes.io/basic-auth');
        for (const app of NEST_APPS)
          expect(r().get('Secret', `postgres-role-${DB_ROLES[app]}`).type).toBe('kubernetes.io/basic-auth');
      }
    },
  );
});

it('sandbox: the example connection URLs carry the credentials the backing services are created with', () => {
  const sb = renders.sandbox;
  const urls = sb.get('Secret', 'crew-record-secrets').stringData ?? {};
  const db = new URL(urls.DATABASE_URL);
  const pgOwner = sb.get('Secret', 'postgres-app-credentials').stringData ?? {};
  const cnpg = sb.get('Cluster', 'postgres').spec.bootstrap.initdb;
  expect([db.hostname, db.port, db.pathname]).toEqual(['postgres-rw', '5432', `/${cnpg.database}`]);
  expect([decodeURIComponent(db.username), decodeURIComponent(db.password)]).toEqual([
    pgOwner.username,
    pgOwner.password,
  ]);
  expect(pgOwner.username).toBe(cnpg.owner);
  // Each app: its own role, through the pooler, to the same database.
  const pooler = sb.get('Pooler', POOLER);
  for (const app of NEST_APPS) {
    const url = new URL(urls[dbUrlKey(app)]);
    const role = sb.get('Secret', `postgres-role-${DB_ROLES[app]}`).stringData ?? {};
    expect([url.hostname, url.port, url.pathname]).toEqual([
      pooler.metadata.name,
      '5432',
      `/${cnpg.database}`,
    ]);
    expect([decodeURIComponent(url.username), decodeURIComponent(url.password)]).toEqual([
      role.username,
      role.password,
    ]);
    expect(role.username).toBe(DB_ROLES[app]);
  }

  const redis = new URL(urls.REDIS_URL);
  expect([redis.hostname, redis.port]).toEqual(['redis', '6379']);
  expect(decodeURIComponent(redis.password)).toBe(sb.get('Secret', 'redis-auth').stringData?.password);

  // Each app: its own RabbitMQ user, with the permissions `npm start` and `npm test` give it.
  const rabbitConfig: string = sb.get('RabbitmqCluster', 'rabbitmq').spec.rabbitmq.additionalConfig;
  const setting = (key: string) => new RegExp(`^${key} = (.+)$`, 'm').exec(rabbitConfig)?.[1];
  expect(urls.AMQP_URL).toBeUndefined();
  for (const app of NEST_APPS) {
    const amqp = new URL(urls[amqpUrlKey(app)]);
    const user = sb.get('User', app);
    const secret = sb.get('Secret', user.spec.importCredentialsSecret.name).stringData ?? {};
    expect([amqp.hostname, amqp.port]).toEqual(['rabbitmq', '5672']);
    expect([decodeURIComponent(amqp.username), decodeURIComponent(amqp.password)]).toEqual([
      secret.username,
      secret.password,
    ]);
    expect(secret.username).toBe(amqpUser(app));
    expect(user.spec.tags).toEqual([]);
    const vhost = decodeURIComponent(amqp.pathname.slice(1));
    expect(vhost).toBe(setting('default_vhost'));
    const permission = sb.get('Permission', app).spec;
    expect(permission.vhost).toBe(vhost);
    expect(permission.userReference.name).toBe(app);
    expect(permission.permissions).toEqual(APPS[app].amqp);
    const topics = sb
      .all('TopicPermission')
      .filter((t) => t.spec.userReference?.name === app)
      .map((t) => {
        expect(t.spec.vhost).toBe(vhost);
        return t.spec.permissions;
      });
    expect(topics).toEqual(topicPermissions(app));
  }
  expect(sb.get('Vhost', 'crew-records').spec.name).toBe(setting('default_vhost'));
});
