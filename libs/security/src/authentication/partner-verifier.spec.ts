import { createHash } from 'node:crypto';
import { DependencyUnavailableError, RpcRemoteError, type RpcClient } from '@svc/platform';
import { PARTNER_CREDENTIALS_TTL_MS, RpcPartnerVerifier } from './partner-verifier';

const PARTNER = { client_id: 'p', name: 'P', sponsorship: true, member_left: false, suspended: false };

function verifier(answers: unknown[]) {
  const calls: unknown[] = [];
  const rpc = {
    call: (_contract: unknown, payload: unknown) => {
      calls.push(payload);
      const next = answers.shift();
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
  } as unknown as RpcClient;
  const v = new RpcPartnerVerifier(rpc);
  let now = 1_000_000;
  v.now = () => now;
  return { v, calls, advance: (ms: number) => (now += ms) };
}

describe('RpcPartnerVerifier', () => {
  it('sends only the SHA-256 of the secret', async () => {
    const { v, calls } = verifier([{ valid: true, partner: PARTNER }]);
    await v.verify('p', 'the-secret');
    expect(JSON.stringify(calls)).not.toContain('the-secret');
    expect(calls[0]).toEqual({
      client_id: 'p',
      secret_digest: createHash('sha256').update('the-secret').digest('hex'),
    });
  });

  it('reuses a confirmed answer for a few seconds, then asks again', async () => {
    const { v, calls, advance } = verifier([
      { valid: true, partner: PARTNER },
      { valid: true, partner: { ...PARTNER, suspended: true } },
    ]);
    expect(await v.verify('p', 's')).toEqual(PARTNER);
    advance(PARTNER_CREDENTIALS_TTL_MS - 1);
    expect(await v.verify('p', 's')).toEqual(PARTNER);
    expect(calls).toHaveLength(1);
    advance(2);
    expect((await v.verify('p', 's'))?.suspended).toBe(true);
    expect(calls).toHaveLength(2);
  });

  it('never caches wrong credentials, nor reuses an answer for another secret', async () => {
    const { v, calls } = verifier([
      { valid: false },
      { valid: false },
      { valid: true, partner: PARTNER },
      { valid: false },
    ]);
    expect(await v.verify('p', 'wrong')).toBeUndefined();
    expect(await v.verify('p', 'wrong')).toBeUndefined();
    expect(await v.verify('p', 'right')).toEqual(PARTNER);
    expect(await v.verify('p', 'other')).toBeUndefined();
    expect(calls).toHaveLength(4);
  });

  it('refuses a client_id holding a NUL without asking auth-server', async () => {
    const { v, calls } = verifier([{ valid: true, partner: PARTNER }]);
    expect(await v.verify('sandbox-partner\u0000', 'the-secret')).toBeUndefined();
    expect(calls).toEqual([]);
  });

  it('fails closed when auth-server answers with an error', async () => {
    const { v } = verifier([new RpcRemoteError('auth.partners.verify', { error: 'boom' })]);
    await expect(v.verify('p', 's')).rejects.toBeInstanceOf(DependencyUnavailableError);
  });
});
