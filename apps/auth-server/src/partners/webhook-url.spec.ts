import { webhookUrlProblem } from './webhook-url';

const resolvesTo =
  (...addresses: string[]) =>
  () =>
    Promise.resolve(addresses);

describe('webhookUrlProblem (registration uses the delivery rules)', () => {
  it('accepts an https URL whose name resolves to public addresses only', async () => {
    await expect(
      webhookUrlProblem('https://hooks.partner.example/in', 'production', resolvesTo('93.184.216.34')),
    ).resolves.toBeUndefined();
  });

  it.each([
    ['http://hooks.partner.example/in', resolvesTo('93.184.216.34'), 'the target must use HTTPS'],
    ['https://hooks.partner.example/in', resolvesTo('93.184.216.34', '10.0.0.7'), 'private'],
    ['https://127.0.0.1/in', resolvesTo(), 'loopback'],
    ['https://[::ffff:169.254.169.254]/latest', resolvesTo(), 'an IPv4-mapped address'],
    ['https://192.0.2.10/in', resolvesTo(), 'documentation (TEST-NET-1)'],
    ['https://hooks.partner.example:8443/in', resolvesTo('93.184.216.34'), 'port 8443 is not open'],
    ['not a url', resolvesTo(), 'not a URL'],
  ])('refuses %s in production, saying why', async (url, resolve, reason) => {
    const problem = await webhookUrlProblem(url, 'production', resolve);
    expect(problem).toContain(`webhook URL ${url} is refused`);
    expect(problem).toContain(reason);
    expect(problem).toContain('HTTPS on port 443 to public addresses only');
  });

  it('refuses a name that does not resolve', async () => {
    const fails = () => Promise.reject(new Error('ENOTFOUND'));
    await expect(webhookUrlProblem('https://nowhere.example/in', 'production', fails)).resolves.toContain(
      'does not resolve',
    );
  });

  it('accepts plain HTTP to loopback in the sandbox only', async () => {
    const url = 'http://localhost:8765/webhooks';
    await expect(webhookUrlProblem(url, 'sandbox', resolvesTo('127.0.0.1', '::1'))).resolves.toBeUndefined();
    await expect(webhookUrlProblem(url, 'production', resolvesTo('127.0.0.1'))).resolves.toContain('refused');
  });
});
