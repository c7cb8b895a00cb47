import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import type { SecretBox } from '../crypto/secrets';
import type { PartnersRepository } from './partners.repository';
import { PartnerRegistrationError, PartnersService } from './partners.service';

function setup(appEnv: 'production' | 'sandbox', addresses: string[]) {
  const repository = {
    findById: jest.fn().mockResolvedValue({ clientId: 'acme', webhookSecretCurrent: null }),
    findChecked: jest.fn(),
    insert: jest.fn().mockResolvedValue(undefined),
    update: jest.fn().mockResolvedValue(true),
  };
  const box = { seal: (text: string) => `sealed:${text}` };
  const service = new PartnersService(
    repository as unknown as PartnersRepository,
    box as unknown as SecretBox,
    { APP_ENV: appEnv },
  );
  service.resolver = () => Promise.resolve(addresses);
  return { service, repository };
}

const registration = (webhookUrl: string) => ({
  clientId: 'acme',
  name: 'Acme',
  redirectUris: ['https://acme.example/cb'],
  scopes: ['profile:read'],
  webhookUrl,
  sponsorship: false,
  memberLeft: false,
});

describe('PartnersService: webhook URLs at registration', () => {
  it('refuses to create a partner whose webhook URL the dispatcher would refuse, storing nothing', async () => {
    const { service, repository } = setup('production', ['10.0.0.5']);
    const refused = service.register(registration('https://hooks.acme.example/in'));
    await expect(refused).rejects.toThrow(PartnerRegistrationError);
    await expect(refused).rejects.toThrow(
      'webhook URL https://hooks.acme.example/in is refused: hooks.acme.example resolves to a private address',
    );
    expect(repository.insert).not.toHaveBeenCalled();
  });

  it('refuses plain HTTP in production', async () => {
    const { service } = setup('production', ['93.184.216.34']);
    await expect(service.register(registration('http://hooks.acme.example/in'))).rejects.toThrow(
      'the target must use HTTPS',
    );
  });

  it('creates a partner with an https URL to a public address, with a webhook secret', async () => {
    const { service, repository } = setup('production', ['93.184.216.34']);
    repository.findById.mockResolvedValueOnce(null);
    const credentials = await service.register(registration('https://hooks.acme.example/in'));
    expect(credentials.webhookSecret).toMatch(/^whsec_/);
    expect(repository.insert).toHaveBeenCalledTimes(1);
  });

  it('sets a webhook URL after the same check; a first URL gets a webhook secret', async () => {
    const { service, repository } = setup('production', ['93.184.216.34']);
    const { webhookSecret } = await service.setWebhookUrl('acme', 'https://hooks.acme.example/v2');
    expect(webhookSecret).toMatch(/^whsec_/);
    expect(repository.update).toHaveBeenCalledWith('acme', {
      webhookUrl: 'https://hooks.acme.example/v2',
      webhookSecretCurrent: `sealed:${webhookSecret}`,
    });
    await expect(service.setWebhookUrl('acme', 'https://[::ffff:127.0.0.1]/in')).rejects.toThrow(
      'an IPv4-mapped address',
    );
    expect(repository.update).toHaveBeenCalledTimes(1);
  });

  it('accepts http to loopback in the sandbox (a local receiver)', async () => {
    const { service } = setup('sandbox', ['127.0.0.1']);
    await expect(service.setWebhookUrl('acme', 'http://localhost:8765/webhooks')).resolves.toBeDefined();
  });
});

describe('PartnersService: remembered client authentication', () => {
  /** What findChecked answers for a partner with this secret, as client_check decides. */
  const stored =
    (secret: string, suspended = false) =>
    (clientId: string, secretDigest: string) => {
      const partner = {
        clientId,
        secretDigest: createHash('sha256').update(secret).digest('hex'),
        suspended,
      };
      const refusal = partner.secretDigest !== secretDigest ? 'credentials' : suspended ? 'suspended' : null;
      return Promise.resolve({ ...partner, refusal });
    };

  it('reads the table once, then answers a matching secret from memory', async () => {
    const { service, repository } = setup('sandbox', []);
    repository.findChecked.mockImplementation(stored('s3cret'));
    const first = await service.authenticateRemembered({ clientId: 'acme', clientSecret: 's3cret' });
    const second = await service.authenticateRemembered({ clientId: 'acme', clientSecret: 's3cret' });
    expect(second).toBe(first);
    expect(repository.findChecked).toHaveBeenCalledTimes(1);
  });

  it('asks the table for a secret that differs from the remembered one, and refuses a wrong one', async () => {
    const { service, repository } = setup('sandbox', []);
    repository.findChecked.mockImplementation(stored('s3cret'));
    await service.authenticateRemembered({ clientId: 'acme', clientSecret: 's3cret' });
    await expect(service.authenticateRemembered({ clientId: 'acme', clientSecret: 'guess' })).rejects.toThrow(
      'Client authentication failed.',
    );
    expect(repository.findChecked).toHaveBeenCalledTimes(2);
  });

  it('never remembers a suspended partner, and forgets on request', async () => {
    const { service, repository } = setup('sandbox', []);
    repository.findChecked.mockImplementation(stored('s3cret', true));
    await expect(
      service.authenticateRemembered({ clientId: 'acme', clientSecret: 's3cret' }),
    ).rejects.toThrow('This partner account is suspended.');
    repository.findChecked.mockImplementation(stored('s3cret'));
    await service.authenticateRemembered({ clientId: 'acme', clientSecret: 's3cret' });
    service.forget('acme');
    await service.authenticateRemembered({ clientId: 'acme', clientSecret: 's3cret' });
    expect(repository.findChecked).toHaveBeenCalledTimes(3);
  });
});

describe('PartnersService: framing origins, registered on their own', () => {
  it('stores the distinct origins given, and an empty list to clear them', async () => {
    const { service, repository } = setup('production', []);
    await expect(
      service.setFrameOrigins('acme', [
        'https://dash.acme.example',
        'https://dash.acme.example',
        'https://b.example:8443',
      ]),
    ).resolves.toEqual(['https://dash.acme.example', 'https://b.example:8443']);
    expect(repository.update).toHaveBeenLastCalledWith(
      'acme',
      { frameOrigins: ['https://dash.acme.example', 'https://b.example:8443'] },
      undefined,
    );
    await expect(service.setFrameOrigins('acme', [])).resolves.toEqual([]);
    expect(repository.update).toHaveBeenLastCalledWith('acme', { frameOrigins: [] }, undefined);
  });

  it.each([
    'https://*',
    'http://dash.acme.example',
    'https://dash.acme.example/path',
    'https://a.example;script-src *',
  ])('refuses %s and stores nothing', async (origin) => {
    const { service, repository } = setup('production', []);
    const refused = service.setFrameOrigins('acme', ['https://ok.example', origin]);
    await expect(refused).rejects.toThrow(PartnerRegistrationError);
    await expect(refused).rejects.toThrow('framing origin');
    expect(repository.update).not.toHaveBeenCalled();
  });

  it('refuses more than 10', async () => {
    const { service, repository } = setup('production', []);
    const many = Array.from({ length: 11 }, (_, i) => `https://d${i}.example`);
    await expect(service.setFrameOrigins('acme', many)).rejects.toThrow('at most 10 framing origins');
    expect(repository.update).not.toHaveBeenCalled();
  });
});

describe('PartnersService: Ed25519 signing keys', () => {
  it('seals the private key, keeps the public half as whpk_ + the raw 32 bytes, and needs a webhook URL', async () => {
    const added: { id: string; privateKey: string; publicKey: string }[] = [];
    const repository = {
      findById: jest.fn().mockResolvedValue({ clientId: 'acme', webhookUrl: 'https://acme.example/in' }),
      addSigningKey: (_: string, key: (typeof added)[number], overlapDays: number) => {
        expect(overlapDays).toBe(7);
        added.push(key);
        return Promise.resolve();
      },
      signingKeys: () =>
        Promise.resolve(added.map((k) => ({ ...k, createdAt: new Date(0), expiresAt: null }))),
    };
    const box = { seal: (text: string) => `sealed:${text}` };
    const service = new PartnersService(
      repository as unknown as PartnersRepository,
      box as unknown as SecretBox,
      { APP_ENV: 'sandbox' },
    );
    const { data } = await service.rotateSigningKey('acme');
    expect(added[0].privateKey).toMatch(/^sealed:MC4CAQAwBQYDK2VwBCIEI/);
    const raw = Buffer.from(data[0].public_key.replace(/^whpk_/, ''), 'base64');
    const der = Buffer.from(added[0].privateKey.slice('sealed:'.length), 'base64');
    const publicKey = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
    expect(publicKey.export({ format: 'der', type: 'spki' }).subarray(-32)).toEqual(raw);
    expect(data).toEqual([
      {
        id: expect.stringMatching(/^whk_/),
        algorithm: 'Ed25519',
        public_key: expect.stringMatching(/^whpk_[A-Za-z0-9+/]{43}=$/),
        created_at: '1970-01-01T00:00:00.000Z',
        expires_at: null,
      },
    ]);
    repository.findById.mockResolvedValue({ clientId: 'acme', webhookUrl: null });
    await expect(service.rotateSigningKey('acme')).rejects.toThrow('acme has no webhook URL');
  });

  it('takes a rotation that loses the race to another of the same partner as that one, not as an error', async () => {
    const kept = { id: 'whk_won', publicKey: 'whpk_x', createdAt: new Date(0), expiresAt: null };
    const repository = {
      findById: jest.fn().mockResolvedValue({ clientId: 'acme', webhookUrl: 'https://acme.example/in' }),
      addSigningKey: () => Promise.reject(Object.assign(new Error('duplicate key'), { code: '23505' })),
      signingKeys: () => Promise.resolve([kept]),
    };
    const service = new PartnersService(
      repository as unknown as PartnersRepository,
      { seal: (text: string) => text } as unknown as SecretBox,
      { APP_ENV: 'sandbox' },
    );
    await expect(service.rotateSigningKey('acme')).resolves.toMatchObject({ data: [{ id: 'whk_won' }] });
    repository.addSigningKey = () =>
      Promise.reject(Object.assign(new Error('no database'), { code: '08006' }));
    await expect(service.rotateSigningKey('acme')).rejects.toThrow('no database');
  });
});
