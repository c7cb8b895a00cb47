/** Every rendered object passes its schema, in the right namespace. */
import { ENVS, type K8sObject, NAMESPACES, renderOverlays, schemaProblems } from './k8s-render';

const renders = renderOverlays();

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
});

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
