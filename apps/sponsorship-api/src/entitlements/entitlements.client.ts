import { Injectable } from '@nestjs/common';
import {
  CREW_MEMBERS_BY_EMAIL,
  CREW_MEMBERSHIP_DROP,
  CREW_MEMBERSHIP_GRANT,
  crewRpcError,
  MEMBERSHIP_DROP_MAX,
  type CrewMemberSummary,
  type MembershipDrop,
  type MembershipGrantRequest,
  type MembershipGrantResponse,
} from '@svc/contracts';
import { DependencyUnavailableError, RpcClient, RpcRemoteError } from '@svc/platform';
import type { SeatRow } from '../seats/seat.entity';

/** crew-api answered that the member does not exist (gone since we looked). */
export class MemberGoneError extends Error {}

/**
 * Premium lives in crew-api; no answer is DependencyUnavailableError, which each caller maps.
 * `timeoutMs`: what is left of the caller's own budget (RPC_TIMEOUT_MS otherwise).
 */
@Injectable()
export class EntitlementsClient {
  constructor(private readonly rpc: RpcClient) {}

  async memberByEmail(email: string, timeoutMs?: number): Promise<CrewMemberSummary | undefined> {
    const answer = await this.call(() =>
      this.rpc.call(CREW_MEMBERS_BY_EMAIL, { emails: [email] }, timeoutMs),
    );
    return answer.members.find((m) => m.email === email);
  }

  async grant(request: MembershipGrantRequest, timeoutMs?: number): Promise<MembershipGrantResponse> {
    return this.call(() => this.rpc.call(CREW_MEMBERSHIP_GRANT, request, timeoutMs));
  }

  /** Drops what each seat gave; answers the seat ids that were downgraded. */
  async drop(drops: readonly MembershipDrop[], timeoutMs?: number): Promise<Set<string>> {
    const downgraded = new Set<string>();
    for (let i = 0; i < drops.length; i += MEMBERSHIP_DROP_MAX) {
      const batch = drops.slice(i, i + MEMBERSHIP_DROP_MAX);
      const answer = await this.call(() => this.rpc.call(CREW_MEMBERSHIP_DROP, { drops: batch }, timeoutMs));
      for (const id of answer.downgraded) downgraded.add(id);
    }
    return downgraded;
  }

  /** Drops the premium the active ones of `seats` gave; answers the seat ids that were downgraded. */
  dropSeats(seats: readonly SeatRow[]): Promise<Set<string>> {
    return this.drop(
      seats
        .filter((s) => s.status === 'active' && s.userId !== null)
        .map((s) => ({ user_id: s.userId as string, sponsorship_id: s.sponsorshipId })),
    );
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof RpcRemoteError) {
        if (crewRpcError(err.remote) === 'member_not_found') throw new MemberGoneError(err.message);
        throw new DependencyUnavailableError('crew-api', err);
      }
      throw err;
    }
  }
}
