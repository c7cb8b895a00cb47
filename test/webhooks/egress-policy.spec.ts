import fs from 'node:fs';
import path from 'node:path';
import { WEBHOOK_PORTS } from '@svc/platform';
import { parseAllDocuments } from 'yaml';

// Registration refuses a webhook URL on a port the dispatcher's egress NetworkPolicy does not open
// (WEBHOOK_PORTS): both must name the same ports, or a URL that registers fails every attempt.

interface Policy {
  kind?: string;
  metadata?: { name?: string };
  spec?: { egress?: { ports?: { protocol?: string; port?: number }[] }[] };
}

describe('webhook URL ports and the dispatcher’s egress policy', () => {
  it('opens exactly the ports registration accepts (WEBHOOK_PORTS)', () => {
    const file = path.join(__dirname, '../../k8s/base/network-policies.yaml');
    const docs = parseAllDocuments(fs.readFileSync(file, 'utf8')).map((d) => d.toJS() as Policy | null);
    const policy = docs.find((d) => d?.metadata?.name === 'webhook-dispatcher-egress-public');
    expect(policy?.kind).toBe('NetworkPolicy');
    const ports = (policy?.spec?.egress ?? []).flatMap((rule) => rule.ports ?? []);
    expect(ports.every((p) => p.protocol === 'TCP')).toBe(true);
    expect(ports.map((p) => p.port).sort()).toEqual([...WEBHOOK_PORTS].sort());
  });
});
