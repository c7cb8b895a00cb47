/** Production compared with sandbox. */
import { type Env, HTTP_APPS, amqpUrlKey, appContainer, renderOverlays } from './k8s-render';

const renders = renderOverlays();

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
