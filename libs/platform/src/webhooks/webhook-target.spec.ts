import { checkTarget, nonPublicKind } from './webhook-target';

const noDns = () => Promise.reject(new Error('no DNS in this test'));

/** IPv4 inside IPv6: every spelling is judged by the IPv4 address it carries. */
describe('nonPublicKind on IPv4-translated, -mapped and -compatible IPv6', () => {
  it.each([
    // ::ffff:a.b.c.d (mapped), dotted and hex
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::FFFF:10.0.0.1', 'private'],
    // ::ffff:0:a.b.c.d (translated, RFC 2765), dotted and hex
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::ffff:0:7f00:1', 'loopback'],
    ['::ffff:0:10.1.2.3', 'private'],
    ['0:0:0:0:ffff:0:c0a8:101', 'private'],
    ['::ffff:0:169.254.169.254', 'link-local'],
    // ::a.b.c.d (compatible, deprecated)
    ['::127.0.0.2', 'loopback'],
    ['::192.168.1.1', 'private'],
    ['::a9fe:a9fe', 'link-local'],
    ['::0.0.0.0', 'unspecified'],
  ])('%s is %s', (address, kind) => {
    expect(nonPublicKind(address)).toBe(kind);
  });

  it.each([
    ['::ffff:93.184.216.34'],
    ['::ffff:0:93.184.216.34'],
    ['::ffff:0:5db8:d822'],
    ['::93.184.216.34'],
  ])('%s is public (its IPv4 address is)', (address) => {
    expect(nonPublicKind(address)).toBeUndefined();
  });

  it.each([
    ['https://[::ffff:0:127.0.0.1]/hook', 'loopback'],
    ['https://[::ffff:0:a9fe:a9fe]/latest', 'link-local'],
    ['https://[::10.0.0.1]/hook', 'private'],
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
