import { Injectable } from '@nestjs/common';
import type { EndpointHour, PortalWebhookAction } from '@svc/contracts';
import { Sql } from '@svc/platform';

/** The portal's own queries: the health chart's hours, and the record of its actions and its pruning. */
@Injectable()
export class PartnerPortalRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * The 24 hours ending with the current one, oldest first, from webhook_endpoint_hours (the rows
   * the 24-hour success rate sums): hours without attempts are there with zeros.
   */
  hours(clientId: string): Promise<EndpointHour[]> {
    return this.sql.rows<EndpointHour>(
      `SELECT to_char(g.hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:00:00"Z"') AS hour,
              COALESCE(h.attempts, 0)::int AS attempts, COALESCE(h.successes, 0)::int AS successes
         FROM generate_series(date_trunc('hour', now()) - interval '23 hours', date_trunc('hour', now()),
                              interval '1 hour') AS g (hour)
         LEFT JOIN webhook_endpoint_hours h ON h.client_id = $1 AND h.hour = g.hour
        ORDER BY g.hour`,
      [clientId],
    );
  }

  /** One action of a portal session, whatever it got (`ok` or the Problem code of the refusal). */
  async record(action: {
    readonly clientId: string;
    readonly portalSession: string;
    readonly action: PortalWebhookAction;
    readonly subject: Readonly<Record<string, string>>;
    readonly outcome: string;
  }): Promise<void> {
    await this.sql.affected(
      `INSERT INTO portal_actions (client_id, portal_session, action, subject, outcome)
       VALUES ($1, $2, $3, $4::jsonb, $5)`,
      [action.clientId, action.portalSession, action.action, JSON.stringify(action.subject), action.outcome],
    );
  }

  /**
   * Deletes at most `limit` of the oldest actions recorded more than `olderThanDays` ago (by
   * `portal_actions_by_age`), skipping rows another replica is deleting; returns how many went.
   */
  deleteOlderThan(olderThanDays: number, limit: number): Promise<number> {
    return this.sql.affected(
      `DELETE FROM portal_actions WHERE id IN (
         SELECT id FROM portal_actions WHERE created_at < now() - make_interval(days => $1)
          ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [olderThanDays, limit],
    );
  }
}
