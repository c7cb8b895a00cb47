import {
  APP_SCHEMAS,
  SANDBOX_MEMBERS,
  SANDBOX_PARTNERS,
  SANDBOX_SEATS,
  sandboxSeatExpiry,
} from '@svc/contracts';
import { Sql, withDataSource } from '@svc/platform';
import type { Logger } from 'pino';
import type { SponsorshipApiConfig } from '../config';
import { SPONSORSHIP_API_MIGRATIONS } from '../migrations';
import type { SeatRow } from '../seats/seat.entity';

/** The sandbox seats of docs/rules.md (`cli.js seed`); idempotent: an existing seat is left as it is, even closed. */
export async function seedSandbox(config: SponsorshipApiConfig, logger: Logger): Promise<void> {
  const db = { DATABASE_URL: config.DATABASE_URL, DATABASE_POOL_SIZE: 2 };
  const options = { schema: APP_SCHEMAS['sponsorship-api'], migrations: SPONSORSHIP_API_MIGRATIONS };
  await withDataSource('sponsorship-api', db, options, async (dataSource) => {
    const sql = new Sql(dataSource, 'sponsorship-api');
    const expiresAt = sandboxSeatExpiry(new Date());
    const seeded = await dataSource.transaction(async (tx) => {
      // The partners' names, for the members' account pages before a partner's first provision.
      for (const partner of SANDBOX_PARTNERS.filter((p) => p.sponsorship)) {
        await sql.rows(
          `INSERT INTO sponsors (client_id, name) VALUES ($1, $2)
           ON CONFLICT (client_id) DO UPDATE SET name = EXCLUDED.name WHERE sponsors.name IS NULL`,
          [partner.client_id, partner.name],
          tx,
        );
      }
      const created: string[] = [];
      for (const seat of SANDBOX_SEATS) {
        const name = SANDBOX_MEMBERS.find((m) => m.user_id === seat.user_id)?.name ?? null;
        const rows = await sql.rows<Pick<SeatRow, 'sponsorshipId'>>(
          `INSERT INTO seats (sponsorship_id, client_id, email, external_ref, status, user_id, crew_name,
                             invited_at, activated_at, expires_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, clock_timestamp(),
                   CASE WHEN $5 = 'active' THEN clock_timestamp() END, $8, clock_timestamp())
           ON CONFLICT DO NOTHING
           RETURNING sponsorship_id AS "sponsorshipId"`,
          [
            seat.sponsorship_id,
            seat.client_id,
            seat.email,
            seat.external_ref,
            seat.status,
            seat.user_id,
            name,
            expiresAt,
          ],
          tx,
        );
        if (rows.length === 0) continue;
        created.push(seat.sponsorship_id);
        await sql.rows(
          `INSERT INTO seat_events (sponsorship_id, from_status, to_status, actor, reason)
           VALUES ($1, NULL, $2, 'system', 'sandbox seed')`,
          [seat.sponsorship_id, seat.status],
          tx,
        );
      }
      return created;
    });
    logger.info(
      { seeded },
      seeded.length ? 'sponsorship-api: sandbox seeded' : 'sponsorship-api: sandbox already seeded',
    );
  });
}
