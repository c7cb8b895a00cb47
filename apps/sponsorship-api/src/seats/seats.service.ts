import { Inject, Injectable } from '@nestjs/common';
import type { MemberRegisteredEvent, SeatPageResponse, SeatResponse } from '@svc/contracts';
import { APP_CONFIG, APP_LOGGER, DependencyUnavailableError, newId, TransactionRunner } from '@svc/platform';
import type { PartnerPrincipal } from '@svc/security';
import type { Logger } from 'pino';
import type { SponsorshipApiConfig } from '../config';
import { EntitlementsClient, MemberGoneError } from '../entitlements/entitlements.client';
import { MemberConsentsClient } from '../member-consents/member-consents.client';
import { decodeSeatCursor, encodeSeatCursor } from './dto/seat-cursor';
import { isSeatId, type Provision, type SeatListQuery } from './dto/seat-requests.dto';
import { toSeatResponse } from './dto/seat.response';
import { ProbeBudgetService } from './probe-budget.service';
import { LIVE_STATUSES } from './seat.entity';
import { SeatsException } from './seats.exception';
import { SeatsRepository, type SeatRow } from './seats.repository';

/** What a provision's take-back of a grant may always wait, even past the provision's budget. */
const TAKE_BACK_MIN_MS = 500;

export function seatNotFound(): SeatsException {
  return new SeatsException('seat_not_found', 'You have no seat with this sponsorship_id.');
}

/** A partner's seats (docs/rules.md, Sponsorship); another partner's seat is simply not found. */
@Injectable()
export class SeatsService {
  constructor(
    private readonly seats: SeatsRepository,
    private readonly transactions: TransactionRunner,
    private readonly entitlements: EntitlementsClient,
    private readonly consents: MemberConsentsClient,
    private readonly probeBudget: ProbeBudgetService,
    @Inject(APP_CONFIG) private readonly config: SponsorshipApiConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  async list(partner: Pick<PartnerPrincipal, 'client_id'>, query: SeatListQuery): Promise<SeatPageResponse> {
    const position = query.cursor === undefined ? undefined : decodeSeatCursor(query.cursor);
    if (position && position.status !== (query.status ?? null)) {
      throw new SeatsException(
        'invalid_cursor',
        'The cursor belongs to a list with another status filter; start again from the first page.',
      );
    }
    const rows = await this.seats.page(partner.client_id, query.status, position, query.limit + 1);
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    const connected = await this.connectedOf(partner, page);
    return {
      items: page.map((seat) => toSeatResponse(seat, connected)),
      next_cursor:
        rows.length > query.limit && last
          ? encodeSeatCursor({
              invitedAt: last.invitedAtExact,
              sponsorshipId: last.sponsorshipId,
              status: query.status ?? null,
            })
          : null,
    };
  }

  async get(partner: PartnerPrincipal, sponsorshipId: string): Promise<SeatResponse> {
    const seat = isSeatId(sponsorshipId) ? await this.seats.get(partner.client_id, sponsorshipId) : null;
    if (!seat) throw seatNotFound();
    return this.present(partner, seat);
  }

  /**
   * Idempotent per e-mail (`created` false: the e-mail's live seat, unchanged); the sponsor row lock
   * keeps the quota. A member's premium is granted in the same transaction: a failed grant commits no
   * seat (502) and is taken back. Lock wait, RPCs and the consent question share one RPC_TIMEOUT_MS
   * from `arrivedAt` (with the partner's authentication, which may have asked auth-server); a
   * take-back gets at least TAKE_BACK_MIN_MS, kept out of the grant's wait, so the answer stays
   * within the budget.
   */
  async provision(
    partner: PartnerPrincipal,
    request: Provision,
    arrivedAt = Date.now(),
  ): Promise<{ seat: SeatResponse; created: boolean }> {
    const deadline = arrivedAt + this.config.RPC_TIMEOUT_MS;
    const result = await this.provisionSeat(partner, request, deadline);
    return { seat: await this.present(partner, result.seat, deadline - Date.now()), created: result.created };
  }

  private async provisionSeat(
    partner: PartnerPrincipal,
    request: Provision,
    deadline: number,
  ): Promise<{ seat: SeatRow; created: boolean }> {
    const clientId = partner.client_id;
    const sponsorshipId = newId('sps');
    const left = () => deadline - Date.now();
    let grantTried: { user_id: string; sponsorship_id: string } | undefined;
    try {
      return await this.transactions.run(async (tx) => {
        const quota = (await this.seats.lockSponsor(tx, clientId, partner.name)) ?? this.config.SEAT_QUOTA;
        const same = await this.seats.findLive(tx, clientId, { email: request.email });
        if (same) return { seat: same, created: false };
        await this.probeBudget.assertOpen(tx, clientId);
        if (
          request.externalRef !== null &&
          (await this.seats.findLive(tx, clientId, { externalRef: request.externalRef }))
        ) {
          throw new SeatsException(
            'external_ref_taken',
            'Another live seat of yours has this external_ref; remove it first or use another reference.',
          );
        }
        if ((await this.seats.countLive(tx, clientId)) >= quota) {
          throw new SeatsException(
            'quota_exceeded',
            `You hold ${quota} live seats, your quota; remove seats or ask your account contact for more.`,
          );
        }
        let seat = await this.seats.insert(tx, {
          sponsorshipId,
          clientId,
          email: request.email,
          externalRef: request.externalRef,
          expiresAt: request.expiresAt ?? this.defaultTermEnd(),
        });
        try {
          const member = await this.entitlements.memberByEmail(request.email, left());
          if (member) {
            grantTried = { user_id: member.user_id, sponsorship_id: sponsorshipId };
            const grant = await this.entitlements.grant(
              {
                user_id: member.user_id,
                sponsor_client_id: clientId,
                sponsorship_id: sponsorshipId,
                expires_at: seat.expiresAt.toISOString(),
              },
              left() - TAKE_BACK_MIN_MS,
            );
            seat = await this.seats.activate(tx, sponsorshipId, member.user_id, grant.name, 'member_found');
          }
        } catch (err) {
          if (err instanceof DependencyUnavailableError || err instanceof MemberGoneError) {
            throw new SeatsException(
              'entitlement_write_failed',
              'Premium could not be granted to this member just now. No seat was created and nothing is billed; retry the request.',
            );
          }
          throw err;
        }
        return { seat, created: true };
      });
    } catch (err) {
      if (grantTried) await this.takeBack(grantTried, Math.max(left(), TAKE_BACK_MIN_MS));
      throw err;
    }
  }

  /** Idempotent: a closed seat is answered as it is. Dropping premium and cancelling go together. */
  async remove(partner: PartnerPrincipal, sponsorshipId: string): Promise<SeatResponse> {
    if (!isSeatId(sponsorshipId)) throw seatNotFound();
    const answer = await this.transactions.run(async (tx) => {
      const seat = await this.seats.get(partner.client_id, sponsorshipId, tx);
      if (!seat) throw seatNotFound();
      if (!LIVE_STATUSES.includes(seat.status)) return seat;
      await this.entitlements.dropSeats([seat]);
      const [closed] = await this.seats.close(tx, [seat], 'cancelled', partner.client_id, 'removed');
      return closed;
    });
    return this.present(partner, answer);
  }

  /** The oldest invited seat of a new member's e-mail becomes active (one sponsorship at a time); a failed grant retries. */
  async activateInvited(event: MemberRegisteredEvent): Promise<void> {
    await this.transactions.run(async (tx) => {
      const seat = await this.seats.lockOldestInvited(tx, event.email);
      if (!seat) return;
      const grant = await this.entitlements.grant({
        user_id: event.user_id,
        sponsor_client_id: seat.clientId,
        sponsorship_id: seat.sponsorshipId,
        expires_at: seat.expiresAt.toISOString(),
      });
      await this.seats.activate(tx, seat.sponsorshipId, event.user_id, grant.name, 'member_registered');
    });
  }

  /** One seat as the partner may see it: its member's name only if connected to that partner. */
  private async present(partner: PartnerPrincipal, seat: SeatRow, timeoutMs?: number): Promise<SeatResponse> {
    return toSeatResponse(seat, await this.connectedOf(partner, [seat], timeoutMs));
  }

  /** One consent question for a whole page; none at all when no seat has a name to show. */
  private connectedOf(
    partner: Pick<PartnerPrincipal, 'client_id'>,
    seats: readonly SeatRow[],
    timeoutMs?: number,
  ): Promise<ReadonlySet<string>> {
    const members = seats
      .filter((s) => s.userId !== null && s.crewName !== null)
      .map((s) => s.userId as string);
    if (members.length === 0) return Promise.resolve(new Set());
    return this.consents.connectedAmong(partner.client_id, members, timeoutMs);
  }

  private defaultTermEnd(): Date {
    const end = new Date();
    end.setUTCMonth(end.getUTCMonth() + this.config.SEAT_TERM_MONTHS);
    return end;
  }

  /** A grant whose seat was not committed must not leave premium behind (drop is keyed by the seat). */
  private async takeBack(
    grant: { user_id: string; sponsorship_id: string },
    timeoutMs: number,
  ): Promise<void> {
    try {
      await this.entitlements.drop([grant], timeoutMs);
    } catch (err) {
      this.logger.error(
        { err, user_id: grant.user_id, sponsorship_id: grant.sponsorship_id },
        'a premium grant of an uncommitted seat could not be taken back',
      );
    }
  }
}
