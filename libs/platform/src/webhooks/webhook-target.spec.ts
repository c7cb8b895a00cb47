import { checkTarget, nonPublicKind } from './webhook-target';

const noDns = () => Promise.reject(new Error('no DNS in this test'));

/** IPv4 inside IPv6: every spelling is refused, whichever IPv4 address it carries. */
describe('nonPublicKind on IPv4-translated, -mapped and -compatible IPv6', () => {
  it.each([
    // ::ffff:a.b.c.d (mapped), dotted and hex
    ['::ffff:127.0.0.1', 'IPv4-mapped'],
    ['::ffff:7f00:1', 'IPv4-mapped'],
    ['::FFFF:10.0.0.1', 'IPv4-mapped'],
    ['::ffff:93.184.216.34', 'IPv4-mapped'],
    // ::ffff:0:a.b.c.d (translated, RFC 2765) and ::a.b.c.d (compatible, deprecated): outside 2000::/3
    ['::ffff:0:127.0.0.1', 'not global unicast'],
    ['::ffff:0:5db8:d822', 'not global unicast'],
    ['0:0:0:0:ffff:0:c0a8:101', 'not global unicast'],
    ['::127.0.0.2', 'not global unicast'],
    ['::93.184.216.34', 'not global unicast'],
    ['::a9fe:a9fe', 'not global unicast'],
    ['::0.0.0.0', 'unspecified'],
  ])('%s is %s', (address, kind) => {
    expect(nonPublicKind(address)).toBe(kind);
  });

  it.each([
    ['https://[::ffff:0:127.0.0.1]/hook', 'not global unicast'],
    ['https://[::ffff:0:a9fe:a9fe]/latest', 'not global unicast'],
    ['https://[::10.0.0.1]/hook', 'not global unicast'],
    ['https://[::ffff:93.184.216.34]/hook', 'IPv4-mapped'],
  ])('refuses %s as a delivery target (%s)', async (url, kind) => {
    await expect(checkTarget(url, 'production', noDns)).resolves.toEqual({
      ok: false,
      reason: expect.stringContaining(`${kind} address`) as unknown,
    });
  });
});

describe('the sandbox’s local receivers', () => {
  const dockerHost = (address: string) => async (name: string) =>
    name === 'host.docker.internal' ? [address] : [];

  it.each([
    ['http://127.0.0.1:8765/webhooks', ['127.0.0.1']],
    ['http://host.docker.internal:8765/webhooks', ['172.17.0.1']],
    ['http://HOST.docker.internal:8765/webhooks', ['192.168.65.254']],
  ])('accepts %s in the sandbox (plain HTTP to the developer’s machine)', async (url, addresses) => {
    const verdict = await checkTarget(url, 'sandbox', dockerHost(addresses[0]));
    expect(verdict).toEqual(expect.objectContaining({ ok: true, addresses }));
  });

  it.each([
    // Not in production, whatever it resolves to.
    ['http://host.docker.internal:8765/webhooks', 'production', '172.17.0.1', 'HTTPS'],
    ['https://host.docker.internal/webhooks', 'production', '172.17.0.1', 'private address'],
    // Only Docker's name: another name on a private address stays refused in the sandbox.
    ['http://receiver.internal:8765/webhooks', 'sandbox', '172.17.0.1', 'HTTPS'],
    // Docker's name on a link-local or metadata address is not the developer's machine.
    ['http://host.docker.internal/latest', 'sandbox', '169.254.169.254', 'HTTPS'],
  ] as const)('refuses %s in %s when it resolves to %s', async (url, env, address, reason) => {
    const verdict = await checkTarget(url, env, async () => [address]);
    expect(verdict).toEqual({ ok: false, reason: expect.stringContaining(reason) as unknown });
  });
});

describe('the port of a webhook URL (the egress policy opens 443 only)', () => {
  const publicDns = () => Promise.resolve(['93.184.216.34']);

  it.each(['https://partner.example/hook', 'https://partner.example:443/hook'])('accepts %s', async (url) => {
    await expect(checkTarget(url, 'production', publicDns)).resolves.toMatchObject({ ok: true });
  });

  it.each([
    ['https://partner.example:8443/hook', 8443],
    ['https://partner.example:80/hook', 80],
  ])('refuses %s, in production and in the sandbox alike', async (url, port) => {
    for (const env of ['production', 'sandbox'] as const) {
      await expect(checkTarget(url, env, publicDns)).resolves.toEqual({
        ok: false,
        reason: `port ${port} is not open to webhooks (443 only)`,
      });
    }
  });

  it('lets the sandbox deliver to a local receiver on any port', async () => {
    await expect(checkTarget('http://127.0.0.1:8765/webhooks', 'sandbox', noDns)).resolves.toMatchObject({
      ok: true,
    });
  });
});
