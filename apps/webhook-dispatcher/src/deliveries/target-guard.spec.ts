import { checkTarget, nonPublicKind } from '@svc/platform';
import { pinnedLookup } from './target-guard';

const resolvesTo =
  (...addresses: string[]) =>
  () =>
    Promise.resolve(addresses);

describe('SSRF guard (docs/rules.md, Webhooks)', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.31.255.1', 'private'],
    ['192.168.0.10', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['0.0.0.0', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fd12::1', 'unique local'],
    ['::ffff:10.0.0.1', 'IPv4-mapped'],
    // The hex spelling URL parsing produces for [::ffff:127.0.0.1], and the other IPv4-in-IPv6
    // forms: refused whichever IPv4 address they carry.
    ['::ffff:7f00:1', 'IPv4-mapped'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'IPv4-mapped'],
    ['::10.0.0.1', 'not global unicast'],
    ['64:ff9b::a00:1', 'IPv4-IPv6 translation (NAT64)'],
    ['64:ff9b::192.168.1.1', 'IPv4-IPv6 translation (NAT64)'],
    ['64:ff9b:1::1', 'IPv4-IPv6 translation (local use)'],
    ['2002:a00:1::1', '6to4'],
    ['2002:7f00:1::', '6to4'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:db8::1', 'documentation'],
    ['100::1', 'discard-only'],
    ['192.0.2.1', 'documentation (TEST-NET-1)'],
    ['198.51.100.7', 'documentation (TEST-NET-2)'],
    ['203.0.113.9', 'documentation (TEST-NET-3)'],
    ['192.88.99.1', '6to4 relay anycast (deprecated)'],
    ['fec0::1', 'site-local (deprecated)'],
    ['ff02::1', 'multicast'],
    ['::', 'unspecified'],
    ['fe80::1%eth0', 'link-local'],
    ['1:2:3', 'unparseable'],
  ])('knows %s as %s', (address, kind) => {
    expect(nonPublicKind(address)).toBe(kind);
  });

  it.each([['93.184.216.34'], ['172.32.0.1'], ['2606:4700::1111'], ['2a00:1450:4001:82b::200e']])(
    'knows %s as public',
    (address) => {
      expect(nonPublicKind(address)).toBeUndefined();
    },
  );

  it('accepts an HTTPS target that resolves only to public addresses', async () => {
    await expect(
      checkTarget(
        'https://partner.example/hooks',
        'production',
        resolvesTo('93.184.216.34', '2606:4700::1111'),
      ),
    ).resolves.toMatchObject({
      ok: true,
      addresses: ['93.184.216.34', '2606:4700::1111'],
    });
  });

  it.each([
    ['https://[::ffff:127.0.0.1]/hook', 'IPv4-mapped'],
    ['https://[64:ff9b::10.0.0.1]/hook', 'IPv4-IPv6 translation (NAT64)'],
    ['https://[2002:a9fe:a9fe::1]/hook', '6to4'],
  ])('refuses %s, an IPv6 literal carrying an IPv4 address (%s)', async (url, kind) => {
    const verdict = await checkTarget(url, 'production', resolvesTo());
    expect(verdict).toMatchObject({ ok: false, reason: expect.stringContaining(` ${kind} address`) });
  });

  it('refuses plain HTTP in production', async () => {
    const verdict = await checkTarget(
      'http://partner.example/hooks',
      'production',
      resolvesTo('93.184.216.34'),
    );
    expect(verdict).toEqual({ ok: false, reason: 'the target must use HTTPS' });
  });

  it.each([
    ['a name that resolves to a private address', 'https://intranet.example/x', ['10.0.0.5']],
    [
      'a name with one private address among public ones',
      'https://mixed.example/x',
      ['93.184.216.34', '192.168.1.1'],
    ],
    ['the cloud metadata address', 'https://169.254.169.254/latest', []],
    ['loopback', 'https://localhost:8443/x', ['127.0.0.1']],
  ])('refuses %s in production', async (_name, url, addresses) => {
    const verdict = await checkTarget(url, 'production', resolvesTo(...addresses));
    expect(verdict.ok).toBe(false);
  });

  it('lets the sandbox deliver to a local receiver over plain HTTP, and nothing private', async () => {
    await expect(checkTarget('http://127.0.0.1:8765/webhooks', 'sandbox')).resolves.toMatchObject({
      ok: true,
      addresses: ['127.0.0.1'],
    });
    await expect(
      checkTarget('http://localhost:8765/webhooks', 'sandbox', resolvesTo('127.0.0.1', '::1')),
    ).resolves.toMatchObject({
      ok: true,
      addresses: ['127.0.0.1', '::1'],
    });
    expect((await checkTarget('http://10.0.0.5/x', 'sandbox')).ok).toBe(false);
    expect((await checkTarget('https://169.254.169.254/x', 'sandbox')).ok).toBe(false);
  });

  it('refuses what is not a URL or does not resolve', async () => {
    expect(await checkTarget('not a url', 'production')).toEqual({ ok: false, reason: 'not a URL' });
    const failing = () => Promise.reject(new Error('ENOTFOUND'));
    expect((await checkTarget('https://nowhere.invalid/x', 'production', failing)).ok).toBe(false);
  });
});

describe('pinnedLookup (the connection goes where the guard looked)', () => {
  const ask = (lookupFn: ReturnType<typeof pinnedLookup>, hostname: string, options: object) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
      lookupFn(hostname, options, (err, address, family) => resolve({ err, address, family })),
    );

  it('answers with the approved addresses whatever the name, never asking DNS again', async () => {
    const pinned = pinnedLookup(['93.184.216.34', '2606:4700::1111']);
    await expect(ask(pinned, 'rebinding.example', {})).resolves.toEqual({
      err: null,
      address: '93.184.216.34',
      family: 4,
    });
    await expect(ask(pinned, 'rebinding.example', { all: true })).resolves.toMatchObject({
      err: null,
      address: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:4700::1111', family: 6 },
      ],
    });
    await expect(ask(pinned, 'rebinding.example', { family: 6 })).resolves.toMatchObject({
      address: '2606:4700::1111',
      family: 6,
    });
  });

  it('fails rather than connect to a family it has no approved address of', async () => {
    const { err } = await ask(pinnedLookup(['93.184.216.34']), 'partner.example', { family: 6 });
    expect(err?.code).toBe('ENOTFOUND');
  });
});
