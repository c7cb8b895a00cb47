import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  canonicalBody,
  signatureHeader,
} from '../../apps/webhook-dispatcher/src/deliveries/webhook-signature';

/**
 * The webhook guide's verification code, run against deliveries signed by the dispatcher's own
 * signer: what partners copy must accept real signatures and refuse forged or stale ones.
 */
const EXAMPLES = join(__dirname, '..', '..', 'docs', 'partners', 'examples');
const SECRET = 'whsec_sandbox_secret';
const body = canonicalBody({
  id: 'evt_docs_example',
  type: 'user.vessels.updated',
  user_id: 'usr_sandbox_alex_morgan',
  created_at: '2026-03-03T09:15:00.000Z',
});
const now = 1_772_529_300;

/** Each case: the header, the secret to verify with, the verifier's clock, and the expected answer. */
const CASES: readonly {
  name: string;
  header: string;
  secret: string;
  at: number;
  body: string;
  ok: boolean;
}[] = [
  {
    name: 'a delivery',
    header: signatureHeader([SECRET], now, body),
    secret: SECRET,
    at: now,
    body,
    ok: true,
  },
  {
    name: 'a delivery during a secret rotation (two v1)',
    header: signatureHeader(['whsec_old', SECRET], now, body),
    secret: SECRET,
    at: now + 60,
    body,
    ok: true,
  },
  {
    name: 'another secret',
    header: signatureHeader([SECRET], now, body),
    secret: 'whsec_other',
    at: now,
    body,
    ok: false,
  },
  {
    name: 'a changed body',
    header: signatureHeader([SECRET], now, body),
    secret: SECRET,
    at: now,
    body: body.replace('vessels', 'profile'),
    ok: false,
  },
  {
    name: 'a timestamp outside the 5-minute window',
    header: signatureHeader([SECRET], now, body),
    secret: SECRET,
    at: now + 301,
    body,
    ok: false,
  },
  { name: 'no signature', header: `t=${now}`, secret: SECRET, at: now, body, ok: false },
];

describe('the webhook guide’s examples', () => {
  // Run as a partner runs them: the example files themselves, in Node and in Python.
  it('Node: accepts real signatures, refuses forged and stale ones', () => {
    const script = `
import { verifyWebhook } from ${JSON.stringify(pathToFileURL(join(EXAMPLES, 'webhook-receiver.mjs')).href)};
let input = '';
for await (const chunk of process.stdin) input += chunk;
const cases = JSON.parse(input);
console.log(JSON.stringify(cases.map((c) => verifyWebhook(Buffer.from(c.body, 'utf8'), c.header, c.secret, c.at))));
`;
    const res = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      input: JSON.stringify(CASES),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect({ status: res.status, stderr: res.stderr }).toEqual({ status: 0, stderr: '' });
    expect(JSON.parse(res.stdout)).toEqual(CASES.map((c) => c.ok));
  });

  it('Python: the same cases', () => {
    const script = `
import json, sys
sys.path.insert(0, ${JSON.stringify(EXAMPLES)})
from verify_webhook import verify_webhook
cases = json.load(sys.stdin)
print(json.dumps([verify_webhook(c["body"].encode(), c["header"], c["secret"], now=c["at"]) for c in cases]))
`;
    const res = spawnSync('python3', ['-c', script], {
      input: JSON.stringify(CASES),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect({ status: res.status, stderr: res.stderr }).toEqual({ status: 0, stderr: '' });
    expect(JSON.parse(res.stdout)).toEqual(CASES.map((c) => c.ok));
  });

  it('the quickstart script is valid JavaScript for Node', () => {
    const res = spawnSync(process.execPath, ['--check', join(EXAMPLES, 'quickstart.mjs')], {
      encoding: 'utf8',
    });
    expect({ status: res.status, stderr: res.stderr }).toEqual({ status: 0, stderr: '' });
  });
});
