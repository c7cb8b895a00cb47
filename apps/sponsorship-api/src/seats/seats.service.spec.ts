import {
  createLogger,
  DependencyUnavailableError,
  SHORTEST_RPC_TIMEOUT_MS,
  type RpcClient,
} from '@svc/platform';
import type { PartnerPrincipal } from '@svc/security';
import type { SponsorshipApiConfig } from '../config';
import { EntitlementsClient } from '../entitlements/entitlements.client';
import type { MemberConsentsClient } from '../member-consents/member-consents.client';
import type { ProbeBudgetService } from './probe-budget.service';
import type { SeatRow } from './seat.entity';
import { SeatsException } from './seats.exception';
import type { SeatsRepository } from './seats.repository';
import { SeatsService } from './seats.service';
import type { TransactionRunner } from '@svc/platform';

const RPC_TIMEOUT_MS = 2000;
const partner = { client_id: 'acme', name: 'Acme' } as PartnerPrincipal;
const provision = { email: 'alex@example.test', externalRef: null, expiresAt: null };

/**
 * A provision whose wait for its partner's lock takes `lockWaitMs` of a fake clock, against a crew-api
 * that finds the member and then answers the grant as `grant` says. What each call to crew-api was
 * given to wait is recorded (a call RpcClient would not send is not).
 */
function provisionAfterLockWait(lockWaitMs: number, grant: () => Promise<unknown>, authMs = 0) {
  let now = 1_000_000;
  jest.spyOn(Date, 'now').mockImplementation(() => now);
  const asked: { pattern: string; timeoutMs: number }[] = [];
  const rpc = {
    call: async (contract: { pattern: string }, _payload: unknown, timeoutMs: number) => {
      // As RpcClient: too little time left, nothing is sent.
      if (timeoutMs < SHORTEST_RPC_TIMEOUT_MS) throw new DependencyUnavailableError('crew-api');
      asked.push({ pattern: contract.pattern, timeoutMs });
      if (contract.pattern === 'crew.members.by_email') {
        return { members: [{ user_id: 'usr_1', email: provision.email }] };
      }
      if (contract.pattern === 'crew.membership.grant') return grant();
      return { downgraded: [] };
    },
  } as unknown as RpcClient;
  const seat = { sponsorshipId: 'sps_1', expiresAt: new Date('2027-11-26T00:00:00Z') } as SeatRow;
  const seats = {
    lockSponsor: async () => {
      now += lockWaitMs;
      return null;
    },
    findLive: async () => null,
    countLive: async () => 0,
    insert: async () => seat,
    activate: async () => seat,
  } as unknown as SeatsRepository;
  const service = new SeatsService(
    seats,
    { run: (work: (tx: unknown) => Promise<unknown>) => work({}) } as unknown as TransactionRunner,
    new EntitlementsClient(rpc),
    {} as MemberConsentsClient,
    { assertOpen: async () => undefined } as unknown as ProbeBudgetService,
    { RPC_TIMEOUT_MS, SEAT_QUOTA: 100, SEAT_TERM_MONTHS: 12 } as SponsorshipApiConfig,
    createLogger('seats-test', 'silent'),
  );
  // The request arrived `authMs` before the service was called (its partner's authentication).
  return { result: service.provision(partner, provision, now - authMs), asked };
}

afterEach(() => jest.restoreAllMocks());

describe('SeatsService.provision, one budget for the lock and crew-api', () => {
  it('gives crew-api only what the wait for the lock left of RPC_TIMEOUT_MS, the grant 500 ms less (kept for a take-back)', async () => {
    const { result, asked } = provisionAfterLockWait(1000, () =>
      Promise.reject(new DependencyUnavailableError('crew-api')),
    );
    await expect(result).rejects.toMatchObject({ code: 'entitlement_write_failed' });
    expect(asked.map((a) => a.timeoutMs)).toEqual([1000, 500, 1000]);
    expect(asked.map((a) => a.pattern)).toEqual([
      'crew.members.by_email',
      'crew.membership.grant',
      expect.stringMatching(/drop/),
    ]);
  });

  it('sends no grant when less than the take-back’s 500 ms is left, and takes back with at least 500 ms', async () => {
    const { result, asked } = provisionAfterLockWait(1500, () => Promise.resolve({}));
    await expect(result).rejects.toMatchObject({ code: 'entitlement_write_failed' });
    expect(asked.map((a) => a.timeoutMs)).toEqual([500, 500]);
    expect(asked[1].pattern).toMatch(/drop/);
  });

  it('counts the time before the service (the partner’s authentication) in the same budget', async () => {
    const { result, asked } = provisionAfterLockWait(
      500,
      () => Promise.reject(new DependencyUnavailableError('crew-api')),
      500,
    );
    await expect(result).rejects.toMatchObject({ code: 'entitlement_write_failed' });
    expect(asked.map((a) => a.timeoutMs)).toEqual([1000, 500, 1000]);
  });

  it('asks nothing when the lock took the whole budget: a 502 at once, nothing granted to take back', async () => {
    const { result, asked } = provisionAfterLockWait(RPC_TIMEOUT_MS, () => Promise.resolve({}));
    await expect(result).rejects.toBeInstanceOf(SeatsException);
    await expect(result).rejects.toMatchObject({ code: 'entitlement_write_failed' });
    expect(asked).toEqual([]);
  });
});
