import {
  AUTH_CONSENTS_LIST,
  AUTH_CONSENTS_REVOKE,
  AUTH_MEMBER_ACCESS,
  SPONSORSHIP_MEMBER_SPONSORSHIPS,
} from '@svc/contracts';
import { DependencyUnavailableError, RpcRemoteError } from '@svc/platform';
import pino from 'pino';
import { SessionsService } from '../sessions/sessions.service';
import {
  cookieHeader,
  FakeClock,
  FakeRpcClient,
  FakeSessionsRepository,
} from '../../../../test/support/fake-consent-ui';
import { ConnectionsException } from './connections.exception';
import { ConnectionsService } from './connections.service';

async function setup() {
  const rpc = new FakeRpcClient()
    .on(AUTH_CONSENTS_LIST, () => ({ connections: [] }))
    .on(AUTH_MEMBER_ACCESS, () => ({ consents: [], reads: [], partners: [] }))
    .on(SPONSORSHIP_MEMBER_SPONSORSHIPS, () => ({ sponsorships: [] }));
  const policy = { secure: true };
  const sessions = new SessionsService(
    new FakeSessionsRepository().asRepository(),
    policy,
    new FakeClock().read,
  );
  const { session, cookies } = await sessions.start('usr_1', undefined);
  return {
    rpc,
    service: new ConnectionsService(
      rpc.asRpcClient(),
      sessions,
      policy,
      { RPC_TIMEOUT_MS: 2000 },
      pino({ level: 'silent' }),
    ),
    cookie: cookieHeader(cookies),
    csrf: session.csrfToken,
  };
}

describe('ConnectionsService', () => {
  it('still revokes a partner that is no longer listed, and confirms without a name', async () => {
    const { rpc, service, cookie, csrf } = await setup();
    rpc.on(AUTH_CONSENTS_REVOKE, () => ({ revoked: false }));
    const cookies = await service.disconnect(cookie, 'gone-partner', csrf);
    expect(rpc.callsOf(AUTH_CONSENTS_REVOKE)).toEqual([{ user_id: 'usr_1', client_id: 'gone-partner' }]);
    expect(decodeURIComponent(cookies[0].split(';')[0].split('=')[1])).toBe(
      'That partner can no longer read your record.',
    );
    expect(cookies[0]).toContain('; Secure;');
  });

  it.each([
    ['an object', { error: 'temporarily_unavailable' }],
    ['a string', 'temporarily_unavailable: cache not reachable'],
    ['a nested message', { status: 'error', message: { code: 'temporarily_unavailable' } }],
  ])('maps temporarily_unavailable in %s to its own exception', async (_label, remote) => {
    const { rpc, service, cookie, csrf } = await setup();
    rpc.failWith(AUTH_CONSENTS_REVOKE, new RpcRemoteError('auth.consents.revoke', remote));
    await expect(service.disconnect(cookie, 'p', csrf)).rejects.toEqual(
      new ConnectionsException('disconnect_unavailable'),
    );
  });

  it('lets any other remote error through', async () => {
    const { rpc, service, cookie, csrf } = await setup();
    const error = new RpcRemoteError('auth.consents.revoke', {
      status: 'error',
      message: 'Internal server error',
    });
    rpc.failWith(AUTH_CONSENTS_REVOKE, error);
    await expect(service.disconnect(cookie, 'p', csrf)).rejects.toBe(error);
  });

  it('ignores a flash cookie it cannot decode', async () => {
    const { service, cookie } = await setup();
    await expect(service.list(`${cookie}; svc_flash=%E0%A4%A`)).resolves.toMatchObject({
      outcome: 'list',
      notice: undefined,
      cookies: [],
    });
  });

  it("lists the member's sponsorships, asked of sponsorship-api for the signed-in member", async () => {
    const { rpc, service, cookie } = await setup();
    rpc.on(SPONSORSHIP_MEMBER_SPONSORSHIPS, () => ({
      sponsorships: [
        {
          client_id: 'p1',
          partner_name: 'Harbour Union',
          status: 'active' as const,
          since: '2026-03-01T10:00:00.000Z',
          until: '2027-03-01T10:00:00.000Z',
        },
      ],
    }));
    await expect(service.list(cookie)).resolves.toMatchObject({
      outcome: 'list',
      sponsorships: [
        {
          partner_name: 'Harbour Union',
          status: 'active' as const,
          since: '2026-03-01T10:00:00.000Z',
          until: '2027-03-01T10:00:00.000Z',
        },
      ],
    });
    expect(rpc.callsOf(SPONSORSHIP_MEMBER_SPONSORSHIPS)).toEqual([{ user_id: 'usr_1' }]);
  });

  it('still shows the connections when the sponsorships cannot be read', async () => {
    const { rpc, service, cookie } = await setup();
    rpc.failWith(SPONSORSHIP_MEMBER_SPONSORSHIPS, new DependencyUnavailableError('rpc.sponsorship-api'));
    await expect(service.list(cookie)).resolves.toMatchObject({
      outcome: 'list',
      connections: [],
      sponsorships: 'unavailable',
    });
  });
});
