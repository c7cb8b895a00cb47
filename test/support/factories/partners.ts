import {
  SANDBOX_MEMBERS,
  SANDBOX_PARTNERS,
  SANDBOX_PASSWORD,
  type SandboxMember,
  type SandboxPartner,
} from '@svc/contracts';

/** The seeded sandbox identities of docs/rules.md, looked up by name (read-only constants). */
export type PartnerId = 'sandbox-partner' | 'sandbox-partner-b' | 'sandbox-partner-suspended';
export type MemberEmail = 'alex.morgan@sandbox.test' | 'sam.lee@sandbox.test' | 'jo.kim@sandbox.test';

export function partner(clientId: PartnerId = 'sandbox-partner'): SandboxPartner {
  const found = SANDBOX_PARTNERS.find((p) => p.client_id === clientId);
  if (!found) throw new Error(`no sandbox partner ${clientId}`);
  return found;
}

export function member(email: MemberEmail = 'alex.morgan@sandbox.test'): SandboxMember {
  const found = SANDBOX_MEMBERS.find((m) => m.email === email);
  if (!found) throw new Error(`no sandbox member ${email}`);
  return found;
}

export const MEMBER_PASSWORD = SANDBOX_PASSWORD;

/** Client credentials as a partner sends them in the form body (client_secret_post). */
export function clientPost(p: SandboxPartner = partner()): { client_id: string; client_secret: string } {
  return { client_id: p.client_id, client_secret: p.client_secret };
}

/** `Authorization: Basic …` with the form-urlencoded id and secret (RFC 6749 §2.3.1). */
export function basicAuthorization(clientId: string, clientSecret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(clientSecret)}`).toString('base64')}`;
}
