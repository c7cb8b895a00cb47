import type { Scope } from './scopes';

/** The fixed sandbox identities of docs/rules.md, which each owning app seeds; fixed ids tie the seeds together. */
export interface SandboxPartner {
  readonly client_id: string;
  readonly client_secret: string;
  readonly name: string;
  readonly scopes: readonly Scope[];
  readonly redirect_uris: readonly string[];
  readonly webhook: boolean;
  readonly sponsorship: boolean;
  readonly member_left: boolean;
  readonly suspended: boolean;
}

export const SANDBOX_WEBHOOK_SECRET = 'whsec_sandbox_secret';
export const SANDBOX_DEFAULT_WEBHOOK_URL = 'http://127.0.0.1:8765/webhooks';

export const SANDBOX_PARTNERS: readonly SandboxPartner[] = [
  {
    client_id: 'sandbox-partner',
    client_secret: 'sandbox-secret',
    name: 'Sandbox Partner',
    scopes: ['profile:read', 'seatime:read', 'vessels:read'],
    redirect_uris: [
      'http://localhost:8765/callback',
      'http://127.0.0.1:8765/callback',
      'https://partner.example/callback',
    ],
    webhook: true,
    sponsorship: true,
    member_left: true,
    suspended: false,
  },
  {
    client_id: 'sandbox-partner-b',
    client_secret: 'sandbox-secret-b',
    name: 'Sandbox Partner B',
    scopes: ['profile:read'],
    redirect_uris: ['http://localhost:8766/callback'],
    webhook: false,
    sponsorship: true,
    member_left: false,
    suspended: false,
  },
  {
    client_id: 'sandbox-partner-suspended',
    client_secret: 'sandbox-secret-suspended',
    name: 'Sandbox Partner (suspended)',
    scopes: ['profile:read', 'seatime:read', 'vessels:read'],
    redirect_uris: ['http://localhost:8767/callback'],
    webhook: false,
    sponsorship: true,
    member_left: false,
    suspended: true,
  },
];

export interface SandboxMember {
  readonly user_id: string;
  readonly email: string;
  readonly name: string;
}

export const SANDBOX_PASSWORD = 'sandbox-password';

export const SANDBOX_MEMBERS: readonly SandboxMember[] = [
  { user_id: 'usr_sandbox_alex_morgan', email: 'alex.morgan@sandbox.test', name: 'Alex Morgan' },
  { user_id: 'usr_sandbox_sam_lee', email: 'sam.lee@sandbox.test', name: 'Sam Lee' },
  { user_id: 'usr_sandbox_jo_kim', email: 'jo.kim@sandbox.test', name: 'Jo Kim' },
];

/** A sandbox seat of docs/rules.md, seeded by sponsorship-api (active ones also by crew-api's membership). */
export interface SandboxSeat {
  readonly sponsorship_id: string;
  readonly client_id: string;
  readonly email: string;
  readonly external_ref: string | null;
  readonly status: 'invited' | 'active';
  /** The member of an active seat. */
  readonly user_id: string | null;
}

export const SANDBOX_SEATS: readonly SandboxSeat[] = [
  {
    sponsorship_id: 'sps_sandbox_alex_morgan',
    client_id: 'sandbox-partner',
    email: 'alex.morgan@sandbox.test',
    external_ref: 'crew-alex',
    status: 'active',
    user_id: 'usr_sandbox_alex_morgan',
  },
  {
    sponsorship_id: 'sps_sandbox_sam_lee',
    client_id: 'sandbox-partner',
    email: 'sam.lee@sandbox.test',
    external_ref: 'crew-sam',
    status: 'active',
    user_id: 'usr_sandbox_sam_lee',
  },
  ...[1, 2, 3, 4].map((n) => ({
    sponsorship_id: `sps_sandbox_invitee${n}`,
    client_id: 'sandbox-partner',
    email: `invitee${n}@sandbox.test`,
    external_ref: `ext-${n}`,
    status: 'invited' as const,
    user_id: null,
  })),
  ...[1, 2].map((n) => ({
    sponsorship_id: `sps_sandbox_b_invitee${n}`,
    client_id: 'sandbox-partner-b',
    email: `b-invitee${n}@sandbox.test`,
    external_ref: `b-ext-${n}`,
    status: 'invited' as const,
    user_id: null,
  })),
];

/** The sandbox term's end (next year's last second, UTC), the same in both apps' seeds. */
export function sandboxSeatExpiry(now: Date = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear() + 1, 11, 31, 23, 59, 59));
}
