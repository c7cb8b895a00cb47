import { Injectable } from '@nestjs/common';
import {
  normaliseEmail,
  type MembersByEmailResponse,
  type MembershipDrop,
  type MembershipDropRequest,
  type MembershipDropResponse,
  type MembershipGrantRequest,
  type MembershipGrantResponse,
} from '@svc/contracts';
import { RecordWriter } from '../records/record-writer.service';
import { RecordsException } from '../records/records.exception';
import { MembershipsRepository } from './memberships.repository';

/**
 * Sponsored premium for sponsorship-api's seats. Each change is a record write (new ETag, a
 * `user.profile.updated` event); idempotent per seat, never touching premium held another way.
 */
@Injectable()
export class MembershipsService {
  constructor(
    private readonly writer: RecordWriter,
    private readonly memberships: MembershipsRepository,
  ) {}

  grant(request: MembershipGrantRequest): Promise<MembershipGrantResponse> {
    return this.writer.write(request.user_id, async (write) => {
      const name = write.member.name;
      const current = await this.memberships.current(write.tx, request.user_id);
      const expiresAt = new Date(request.expires_at);
      const sameSeat = current?.source === 'sponsored' && current.sponsorshipId === request.sponsorship_id;
      if (!sameSeat && current?.tier === 'premium') return { granted: false, name };
      if (sameSeat && current.expiresAt?.getTime() === expiresAt.getTime()) return { granted: true, name };
      await write.stamp();
      await this.memberships.sponsor(
        write.tx,
        request.user_id,
        { sponsorClientId: request.sponsor_client_id, sponsorshipId: request.sponsorship_id, expiresAt },
        sameSeat,
      );
      write.emit('user.profile.updated');
      return { granted: true, name };
    });
  }

  /** Each drop is its own record write, so a long list never holds many members' locks. */
  async drop(request: MembershipDropRequest): Promise<MembershipDropResponse> {
    const downgraded: string[] = [];
    for (const drop of request.drops) {
      if (await this.dropOne(drop)) downgraded.push(drop.sponsorship_id);
    }
    return { downgraded };
  }

  private async dropOne(drop: MembershipDrop): Promise<boolean> {
    try {
      return await this.writer.write(drop.user_id, async (write) => {
        const current = await this.memberships.current(write.tx, drop.user_id);
        // The same seat's drop again (sponsorship-api retrying after its own commit failed): it
        // did downgrade the member, and says so again, without a second write or event.
        if (current?.droppedSponsorshipId === drop.sponsorship_id && current.source !== 'sponsored')
          return true;
        if (current?.source !== 'sponsored' || current.sponsorshipId !== drop.sponsorship_id) return false;
        await write.stamp();
        await this.memberships.unsponsor(write.tx, drop.user_id);
        write.emit('user.profile.updated');
        return true;
      });
    } catch (err) {
      if (err instanceof RecordsException && err.code === 'member_not_found') return false;
      throw err;
    }
  }

  async findByEmails(emails: readonly string[]): Promise<MembersByEmailResponse> {
    return { members: await this.memberships.findByEmails([...new Set(emails.map(normaliseEmail))]) };
  }
}
