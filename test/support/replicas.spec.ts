import {
  DEFAULT_METRICS_PORTS,
  DEFAULT_PORTS,
  NEST_APPS,
  parseReplicas,
  replicaMetricsPort,
  replicaPort,
} from '../../scripts/lib/apps.cjs';
import { restartDelayMs } from '../../scripts/lib/procs.cjs';

/** `REPLICAS=N npm start`: how many processes, on which ports, and how soon a dead one comes back. */
describe('npm start with REPLICAS', () => {
  it('defaults to one process per app and takes an integer from 1 to 8', () => {
    expect(parseReplicas(undefined)).toBe(1);
    expect(parseReplicas('')).toBe(1);
    expect(parseReplicas('2')).toBe(2);
    expect(parseReplicas(' 8 ')).toBe(8);
  });

  it.each(['0', '9', '1.5', 'two', '-1', '2x'])('refuses REPLICAS=%j naming the variable', (raw) => {
    expect(() => parseReplicas(raw)).toThrow(/^REPLICAS must be an integer from 1 to 8/);
  });

  it('gives every replica of every app its own port: the default port + 100 per replica', () => {
    expect(replicaPort('crew-api', 0)).toBe(DEFAULT_PORTS['crew-api']);
    expect(replicaPort('crew-api', 1)).toBe(DEFAULT_PORTS['crew-api'] + 100);
    const ports = NEST_APPS.flatMap((app) => Array.from({ length: 8 }, (_, i) => replicaPort(app, i)));
    expect(new Set(ports).size).toBe(ports.length);
    expect(ports).not.toContain(DEFAULT_PORTS.gateway);
  });

  it('gives every replica its own metrics port too, apart from every API port', () => {
    expect(replicaMetricsPort('crew-api', 0)).toBe(DEFAULT_METRICS_PORTS['crew-api']);
    expect(replicaMetricsPort('crew-api', 1)).toBe(DEFAULT_METRICS_PORTS['crew-api'] + 100);
    const all = (port: (app: (typeof NEST_APPS)[number], i: number) => number) =>
      NEST_APPS.flatMap((app) => Array.from({ length: 8 }, (_, i) => port(app, i)));
    const ports = [...all(replicaPort), ...all(replicaMetricsPort), DEFAULT_PORTS.gateway];
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('restarts a dead process within 10 s, backing off while it keeps crashing', () => {
    expect(restartDelayMs(1)).toBe(1000);
    expect(restartDelayMs(1)).toBeLessThanOrEqual(10_000);
    expect([2, 3, 4, 5, 6, 7].map((n) => restartDelayMs(n))).toEqual([2000, 4000, 8000, 16000, 30000, 30000]);
  });
});
