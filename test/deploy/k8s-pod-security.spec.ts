/**
 * Placement and Pod Security: both namespaces enforce the `restricted` Pod Security Standard and
 * every pod the manifests make (and the operators' pods, through what the manifests give them)
 * meets it; every Deployment and StatefulSet spreads over zones; RabbitMQ has a disruption budget.
 */
import { ENVS, NAMESPACES, renderOverlays, selects, type K8sObject, type PodSpec } from './k8s-render';

const renders = renderOverlays();

/* eslint-disable @typescript-eslint/no-explicit-any */
const ALLOWED_VOLUMES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
];
const SAFE_SYSCTLS = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];

/**
 * What the `restricted` profile (Kubernetes 1.25+, "latest") refuses in a pod spec, the baseline
 * checks included. An empty list: the API server admits the pod in a namespace enforcing it.
 */
export function restrictedProblems(spec: PodSpec): string[] {
  const p: string[] = [];
  const pod = spec.securityContext ?? {};
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC) p.push('host namespaces');
  for (const v of spec.volumes ?? []) {
    const type = Object.keys(v).find((k) => k !== 'name');
    if (!ALLOWED_VOLUMES.includes(type ?? '')) p.push(`volume ${v.name}: type ${type} not allowed`);
  }
  for (const s of pod.sysctls ?? []) if (!SAFE_SYSCTLS.includes(s.name)) p.push(`sysctl ${s.name}`);
  if (pod.runAsUser === 0) p.push('pod runAsUser 0');
  if (pod.seccompProfile?.type === 'Unconfined') p.push('pod seccomp Unconfined');
  const containers = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
  for (const c of containers) {
    const sc = c.securityContext ?? {};
    const where = `container ${c.name}`;
    if (sc.privileged) p.push(`${where}: privileged`);
    if (sc.allowPrivilegeEscalation !== false) p.push(`${where}: allowPrivilegeEscalation must be false`);
    if (!(sc.capabilities?.drop ?? []).includes('ALL')) p.push(`${where}: must drop ALL capabilities`);
    for (const cap of sc.capabilities?.add ?? [])
      if (cap !== 'NET_BIND_SERVICE') p.push(`${where}: adds capability ${cap}`);
    if (!(sc.runAsNonRoot === true || (sc.runAsNonRoot === undefined && pod.runAsNonRoot === true)))
      p.push(`${where}: runAsNonRoot must be true (pod or container)`);
    if (sc.runAsUser === 0) p.push(`${where}: runAsUser 0`);
    const seccomp = sc.seccompProfile?.type ?? pod.seccompProfile?.type;
    if (!['RuntimeDefault', 'Localhost'].includes(seccomp))
      p.push(`${where}: seccomp must be RuntimeDefault`);
    if (sc.procMount !== undefined && sc.procMount !== 'Default') p.push(`${where}: procMount`);
    for (const port of c.ports ?? []) if (port.hostPort) p.push(`${where}: hostPort ${port.hostPort}`);
  }
  return p;
}

/** Whether a pod spec spreads its pods (selected by `labels`) over zones. */
function spreadsOverZones(spec: PodSpec, labels: Record<string, string>): boolean {
  return (spec.topologySpreadConstraints ?? []).some(
    (t: any) =>
      t.topologyKey === 'topology.kubernetes.io/zone' &&
      t.maxSkew === 1 &&
      ['ScheduleAnyway', 'DoNotSchedule'].includes(t.whenUnsatisfiable) &&
      selects(t.labelSelector, labels),
  );
}

describe.each(ENVS)('k8s/overlays/%s: Pod Security and placement', (env) => {
  const r = () => renders[env];

  it(`enforces the restricted Pod Security Standard on ${NAMESPACES[env]}`, () => {
    const ns = r().get('Namespace', NAMESPACES[env]);
    expect(ns.metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/warn': 'restricted',
      'pod-security.kubernetes.io/audit': 'restricted',
    });
  });

  it('makes only pods that the restricted profile admits (Deployments, StatefulSets, the Job)', () => {
    const templates = r().podTemplates();
    expect(templates.length).toBeGreaterThanOrEqual(env === 'production' ? 10 : 9);
    const problems = templates.flatMap(({ owner, spec }) =>
      restrictedProblems(spec).map((x) => `${owner.kind}/${owner.metadata.name}: ${x}`),
    );
    expect(problems).toEqual([]);
  });

  it('gives the operators’ pods the settings restricted asks for (RabbitMQ, PgBouncer)', () => {
    // The RabbitMQ operator's defaults run as uid 999 but set no seccomp profile and keep the
    // default capabilities: the override supplies what is missing, for both of its containers.
    const rabbit = r().get('RabbitmqCluster', 'rabbitmq').spec.override.statefulSet.spec.template.spec;
    expect(restrictedProblems(rabbit)).toEqual([]);
    expect(rabbit.containers.map((c: any) => c.name)).toEqual(['rabbitmq']);
    expect(rabbit.initContainers.map((c: any) => c.name)).toEqual(['setup-container']);
    // PgBouncer: the Pooler's template is merged over the operator's pod.
    for (const pooler of r().all('Pooler')) expect(restrictedProblems(pooler.spec.template.spec)).toEqual([]);
    // CloudNativePG's instance pods meet restricted by default; nothing here may loosen them.
    const cluster = r().get('Cluster', 'postgres').spec;
    expect(cluster.seccompProfile?.type ?? 'RuntimeDefault').toBe('RuntimeDefault');
  });

  it('spreads every Deployment and StatefulSet over zones (topology.kubernetes.io/zone)', () => {
    const workloads = r()
      .objects.filter((o: K8sObject) => ['Deployment', 'StatefulSet'].includes(o.kind))
      .map((o: K8sObject) => ({
        what: `${o.kind}/${o.metadata.name}`,
        spread: spreadsOverZones(o.spec.template.spec, o.spec.template.metadata.labels),
      }));
    expect(workloads.length).toBeGreaterThanOrEqual(env === 'production' ? 9 : 8);
    expect(workloads.filter((w) => !w.spread)).toEqual([]);
    // And the operators' StatefulSets / pods, through their resources.
    const rabbit = r().get('RabbitmqCluster', 'rabbitmq').spec.override.statefulSet.spec.template.spec;
    expect(spreadsOverZones(rabbit, { 'app.kubernetes.io/name': 'rabbitmq' })).toBe(true);
    expect(spreadsOverZones(r().get('Cluster', 'postgres').spec, { 'cnpg.io/cluster': 'postgres' })).toBe(
      true,
    );
    for (const pooler of r().all('Pooler'))
      expect(
        spreadsOverZones(pooler.spec.template.spec, { 'cnpg.io/poolerName': pooler.metadata.name }),
      ).toBe(true);
  });

  it('lets a drain take one RabbitMQ node at a time (PodDisruptionBudget), never blocking the one-node sandbox', () => {
    const rabbitPods = { 'app.kubernetes.io/name': 'rabbitmq', 'app.kubernetes.io/component': 'rabbitmq' };
    const budgets = r()
      .all('PodDisruptionBudget')
      .filter((b) => selects(b.spec.selector, rabbitPods));
    expect(budgets.map((b) => [b.metadata.name, b.spec.maxUnavailable, b.spec.minAvailable])).toEqual([
      ['rabbitmq', 1, undefined],
    ]);
  });
});

describe('the restricted checker', () => {
  it('finds what the restricted profile refuses, so the checks above can fail', () => {
    const ok = {
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        { name: 'a', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } },
      ],
      volumes: [{ name: 'tmp', emptyDir: {} }],
    };
    expect(restrictedProblems(ok)).toEqual([]);
    expect(restrictedProblems({ ...ok, securityContext: { runAsNonRoot: true } })).toEqual([
      'container a: seccomp must be RuntimeDefault',
    ]);
    expect(
      restrictedProblems({
        ...ok,
        hostNetwork: true,
        volumes: [{ name: 'h', hostPath: { path: '/' } }],
        containers: [{ name: 'b', securityContext: { capabilities: { add: ['NET_ADMIN'] } } }],
      }),
    ).toEqual([
      'host namespaces',
      'volume h: type hostPath not allowed',
      'container b: allowPrivilegeEscalation must be false',
      'container b: must drop ALL capabilities',
      'container b: adds capability NET_ADMIN',
    ]);
  });
});
/* eslint-enable @typescript-eslint/no-explicit-any */
