import { readRecord, readString } from '../../validate';
import { ContractViolation, RPC_QUEUES, type RpcContract } from '../rpc';
import { API_LIMITS } from '../../limits';

/**
 * `sponsorship.member.sponsorships`: the seats a crew member has held, for their own account page
 * in consent-ui (which never reads sponsorship-api's schema). Every seat that was ever linked to
 * the member is listed, closed ones too, so a member sees each partner that sponsored them, even
 * briefly.
 */
export interface MemberSponsorship {
  readonly client_id: string;
  /** The partner's display name as sponsorship-api last saw it (its client_id if never seen). */
  readonly partner_name: string;
  readonly status: 'active' | 'ended' | 'cancelled';
  /** ISO 8601 UTC: when the seat gave the member premium. */
  readonly since: string;
  /** ISO 8601 UTC: when the seat closed, or for a live seat when its term ends. */
  readonly until: string;
}

export interface MemberSponsorshipsResponse {
  readonly sponsorships: readonly MemberSponsorship[];
}

const NAME = 'sponsorship.member.sponsorships';
const STATUSES = ['active', 'ended', 'cancelled'] as const;

function readTimestamp(record: Record<string, unknown>, field: string): string {
  const value = readString(NAME, record, field, 40);
  if (Number.isNaN(Date.parse(value))) throw new ContractViolation(NAME, `\`${field}\` must be a timestamp`);
  return value;
}

export const SPONSORSHIP_MEMBER_SPONSORSHIPS: RpcContract<
  { readonly user_id: string },
  MemberSponsorshipsResponse
> = {
  pattern: NAME,
  queue: RPC_QUEUES.sponsorshipApi,
  parseRequest: (input) => ({
    user_id: readString(NAME, readRecord(NAME, input), 'user_id', API_LIMITS.idMaxLength),
  }),
  parseResponse(input) {
    const r = readRecord(NAME, input);
    if (!Array.isArray(r.sponsorships)) throw new ContractViolation(NAME, '`sponsorships` must be an array');
    return {
      sponsorships: r.sponsorships.map((item) => {
        const s = readRecord(NAME, item);
        const status = readString(NAME, s, 'status', 20);
        if (!(STATUSES as readonly string[]).includes(status)) {
          throw new ContractViolation(NAME, '`status` must be active, ended or cancelled');
        }
        return {
          client_id: readString(NAME, s, 'client_id', API_LIMITS.idMaxLength),
          partner_name: readString(NAME, s, 'partner_name', 500),
          status: status as MemberSponsorship['status'],
          since: readTimestamp(s, 'since'),
          until: readTimestamp(s, 'until'),
        };
      }),
    };
  },
};
