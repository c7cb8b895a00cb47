import type { PoolClient } from 'pg';
import {
  ACTIVATE_INVITED_SEAT,
  CLOSE_LIVE_SEATS,
} from '../../apps/sponsorship-api/src/seats/seats.repository';
import { useSponsorshipStack } from '../support/starters/sponsorship-api';

/**
 * The statements that find seats by their ids, planned against an empty copy of `seats` with its
 * indexes (a new deployment: no statistics). The partial indexes on live and invited seats keep an
 * entry for every seat that left that state until vacuum, so a plan that reads one of them whole
 * costs a read of every such seat at each activation or close. Both as the application sends them
 * (an unnamed statement, planned with its values) and as a prepared statement's generic plan.
 */
describe('seat statements by id', () => {
  const { api } = useSponsorshipStack();

  async function plan(
    statement: string,
    types: string,
    values: string,
    mode: 'custom' | 'generic',
  ): Promise<string> {
    const session: PoolClient = await api.db.connect();
    try {
      await session.query('BEGIN');
      await session.query('CREATE TEMP TABLE seats (LIKE sponsorship.seats INCLUDING ALL) ON COMMIT DROP');
      await session.query(
        `SET LOCAL search_path = pg_temp, sponsorship; SET LOCAL plan_cache_mode = force_${mode}_plan`,
      );
      await session.query(`PREPARE by_id(${types}) AS ${statement}`);
      const { rows } = await session.query<Record<string, string>>(`EXPLAIN EXECUTE by_id(${values})`);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      await session.query('ROLLBACK');
      await session.query('DEALLOCATE ALL');
      session.release();
    }
  }

  const statements = [
    {
      what: 'activate an invited seat found by its primary key, never by a scan of the index of invited seats',
      statement: ACTIVATE_INVITED_SEAT,
      types: 'text, text, text, boolean',
      values: `'spn_a', 'usr_a', 'Crew A', false`,
      uses: /Index Scan using seats_pkey on seats\b/,
      avoids: /_idx/,
    },
    {
      what: 'close live seats found by their primary keys, never by a scan of an index of live seats',
      statement: CLOSE_LIVE_SEATS,
      types: 'text[], text, interval',
      values: `ARRAY['spn_a', 'spn_b'], 'ended', '24 hours'`,
      uses: /Index Scan on seats_pkey\b|Index Scan using seats_pkey on seats\b/,
      avoids: /on seats_\w+_idx|using seats_\w+_idx/,
    },
  ];
  const cases = statements.flatMap((s) => (['custom', 'generic'] as const).map((mode) => ({ ...s, mode })));

  it.each(cases)('$what ($mode plan)', async ({ statement, types, values, mode, uses, avoids }) => {
    const explained = await plan(statement, types, values, mode);
    expect(explained).toMatch(uses);
    expect(explained).not.toMatch(avoids);
  });
});
