import { Injectable } from '@nestjs/common';
import { Sql, type Transaction } from '@svc/platform';
import type { PartnerEntity, SigningKeyEntity } from './partner.entity';

export type NewPartner = Omit<PartnerEntity, 'createdAt' | 'updatedAt'>;
export type CheckedPartner = PartnerEntity & { readonly refusal: 'credentials' | 'suspended' | null };

/** What a partner is written with; each field's column is its snake_case name. */
const FIELDS = [
  'clientId',
  'secretDigest',
  'name',
  'redirectUris',
  'frameOrigins',
  'allowedScopes',
  'webhookUrl',
  'webhookSecretCurrent',
  'webhookSecretNext',
  'sponsorship',
  'memberLeft',
  'suspended',
] as const satisfies readonly (keyof NewPartner)[];
const column = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const PARTNER_COLUMNS = [...FIELDS, 'createdAt', 'updatedAt'].map((f) => `${column(f)} AS "${f}"`).join(', ');
const SELECT_PARTNER = `SELECT ${PARTNER_COLUMNS} FROM partners`;
const INSERT_PARTNER = `INSERT INTO partners (${FIELDS.map(column).join(', ')})
  VALUES (${FIELDS.map((_, i) => `$${i + 1}`).join(', ')})`;
const REFRESHED = FIELDS.filter((f) => f !== 'clientId');
const values = (partner: NewPartner) => FIELDS.map((f) => partner[f]);

@Injectable()
export class PartnersRepository {
  constructor(private readonly sql: Sql) {}

  findById(clientId: string): Promise<PartnerEntity | null> {
    // PostgreSQL text cannot hold a NUL, so no partner has one; asking would be a database error.
    if (clientId.includes('\u0000')) return Promise.resolve(null);
    return this.sql.row<PartnerEntity>(`${SELECT_PARTNER} WHERE client_id = $1 LIMIT 1`, [clientId]);
  }

  /**
   * The partner and why `client_check` (tokens/token-grants.sql, the grants' own rule) refuses the
   * secret digest, if it does: 'credentials' (a wrong secret) or 'suspended'.
   */
  findChecked(clientId: string, secretDigest: string): Promise<CheckedPartner | null> {
    if (clientId.includes('\u0000')) return Promise.resolve(null);
    return this.sql.row<CheckedPartner>(
      `SELECT ${PARTNER_COLUMNS}, c.refusal FROM partners, client_check($1, $2) c WHERE client_id = $1`,
      [clientId, secretDigest],
    );
  }

  list(): Promise<PartnerEntity[]> {
    return this.sql.rows<PartnerEntity>(`${SELECT_PARTNER} ORDER BY created_at ASC`);
  }

  /** Creates the partner, or brings an existing one in line (sandbox seed, idempotent). */
  async upsert(partner: NewPartner): Promise<void> {
    const refreshed = REFRESHED.map((f) => `${column(f)} = EXCLUDED.${column(f)}`);
    const conflict = `ON CONFLICT (client_id) DO UPDATE SET ${refreshed.join(', ')}`;
    await this.sql.rows(`${INSERT_PARTNER} ${conflict}`, values(partner));
  }

  async insert(partner: NewPartner): Promise<void> {
    await this.sql.rows(INSERT_PARTNER, values(partner));
  }

  async update(
    clientId: string,
    changes: Partial<Omit<NewPartner, 'clientId'>>,
    tx?: Transaction,
  ): Promise<boolean> {
    const changed = REFRESHED.filter((f) => changes[f] !== undefined);
    const updated = await this.sql.affected(
      `UPDATE partners SET ${changed.map((f, i) => `${column(f)} = $${i + 2}, `).join('')}updated_at = now()
        WHERE client_id = $1`,
      [clientId, ...changed.map((f) => changes[f])],
      tx,
    );
    return updated > 0;
  }

  /** The partner's signing keys in use (none expired), oldest first. */
  signingKeys(clientId: string): Promise<SigningKeyEntity[]> {
    return this.sql.rows<SigningKeyEntity>(
      `SELECT id, private_key AS "privateKey", public_key AS "publicKey", created_at AS "createdAt",
              expires_at AS "expiresAt"
         FROM webhook_signing_keys
        WHERE client_id = $1 AND (expires_at IS NULL OR expires_at > now())
        ORDER BY created_at`,
      [clientId],
    );
  }

  /**
   * Adds the partner's newest key: the one it replaces signs `overlapDays` more, and one already
   * replaced before (and every expired one) goes now. A rotation at the same moment fails on
   * `webhook_signing_keys_newest` rather than leave two newest keys.
   */
  async addSigningKey(
    clientId: string,
    key: Pick<SigningKeyEntity, 'id' | 'privateKey' | 'publicKey'>,
    overlapDays: number,
  ): Promise<void> {
    await this.sql.rows(
      `WITH replaced AS (
         DELETE FROM webhook_signing_keys WHERE client_id = $1 AND expires_at IS NOT NULL
       ), aging AS (
         UPDATE webhook_signing_keys SET expires_at = now() + make_interval(days => $5)
          WHERE client_id = $1 AND expires_at IS NULL
         RETURNING 1
       )
       -- Read from aging so that the replaced key has its expiry before the new key is checked
       -- against the index (an unread data-modifying WITH runs after the main statement).
       INSERT INTO webhook_signing_keys (id, client_id, private_key, public_key)
       SELECT $2, $1, $3, $4 FROM (SELECT count(*) FROM aging) AS done`,
      [clientId, key.id, key.privateKey, key.publicKey, overlapDays],
    );
  }
}
