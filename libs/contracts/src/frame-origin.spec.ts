import { frameOriginProblem, frameOrigins, FRAME_ORIGINS_MAX } from './frame-origin';
import { ContractViolation } from './rpc/rpc';

describe('frameOriginProblem: a framing origin is one CSP host source, https and an exact host', () => {
  it.each([
    'https://dashboard.example',
    'https://a.example:8443',
    'https://a.example:65535',
    'https://localhost:9443',
    'https://xn--bcher-kva.example',
    'https://a-b.c-d.example',
    `https://${'a'.repeat(63)}.example`,
  ])('accepts %s', (origin) => {
    expect(frameOriginProblem(origin)).toBeUndefined();
  });

  it.each([
    ['a wildcard host', 'https://*'],
    ['a wildcard label', 'https://*.a.example'],
    ['http', 'http://x'],
    ['http to loopback', 'http://localhost:8765'],
    ['no scheme', 'a.example'],
    ['another scheme', 'wss://a.example'],
    ['a path', 'https://a.example/path'],
    ['a trailing slash', 'https://a.example/'],
    ['a query', 'https://a.example?x=1'],
    ['a fragment', 'https://a.example#x'],
    ['user info', 'https://user@a.example'],
    ['a directive after it', 'https://a.example;script-src *'],
    ['a directive after a space', "https://a.example 'unsafe-inline'"],
    ['a comma (a second policy)', 'https://a.example,https://b.example'],
    ['a quote', "https://a.example'"],
    ['a keyword', "'self'"],
    ['none', "'none'"],
    ['a newline', 'https://a.example\nx'],
    ['a trailing space', 'https://a.example '],
    ['upper case', 'https://A.example'],
    ['upper-case scheme', 'HTTPS://a.example'],
    ['an IDN in Unicode', 'https://bücher.example'],
    ['a wildcard port', 'https://a.example:*'],
    ['port 0', 'https://a.example:0'],
    ['a port too large', 'https://a.example:65536'],
    ['an empty port', 'https://a.example:'],
    ['an IPv6 literal', 'https://[::1]'],
    ['an empty label', 'https://a..example'],
    ['a label starting with a hyphen', 'https://-a.example'],
    ['a label of 64 characters', `https://${'a'.repeat(64)}.example`],
    ['a host over 253 characters', `https://${Array(64).fill('abc').join('.')}`],
    ['empty', ''],
  ])('refuses %s', (_case, origin) => {
    expect(frameOriginProblem(origin)).toEqual(expect.stringContaining('framing origin'));
  });
});

describe('frameOrigins: the contract field consent-ui reads', () => {
  const read = (value: unknown) => frameOrigins('test.contract', { frame_origins: value }, 'frame_origins');

  it('passes a list of good origins through, and an empty one', () => {
    expect(read(['https://a.example', 'https://b.example:8443'])).toEqual([
      'https://a.example',
      'https://b.example:8443',
    ]);
    expect(read([])).toEqual([]);
  });

  it('refuses the whole answer when any origin is bad, or there are too many', () => {
    expect(() => read(['https://a.example', 'https://*'])).toThrow(ContractViolation);
    expect(() => read(['https://a.example; script-src *'])).toThrow(ContractViolation);
    expect(() => read([1])).toThrow(ContractViolation);
    expect(() => read('https://a.example')).toThrow(ContractViolation);
    const many = Array.from({ length: FRAME_ORIGINS_MAX + 1 }, (_, i) => `https://a${i}.example`);
    expect(() => read(many)).toThrow(ContractViolation);
  });
});
