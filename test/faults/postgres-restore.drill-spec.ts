import fs from 'node:fs';
import { faultsDir, PostgresCluster, PostgresWorkspace } from './private-services';

/**
 * The PostgreSQL restore drill (docs/operations/restore-postgres.md, "Rehearsal"), run for real:
 * a cluster archives every WAL segment to a folder; a base backup is taken; rows are committed
 * before the backup and after it, a point in time is recorded, more rows are committed after it;
 * the cluster is then lost (stopped as in a crash). The base backup plus the archived WAL is
 * restored to that point into a fresh data folder, started as a new cluster on a port of its own:
 * every row committed before the point is there, none committed after it is, and the restored
 * cluster takes writes on a timeline of its own.
 */
jest.setTimeout(10 * 60_000);

const BATCHES = 5;
const ROWS_PER_BATCH = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let parent: string;
let ws: PostgresWorkspace;
let primary: PostgresCluster | undefined;
let restored: PostgresCluster | undefined;

beforeAll(() => {
  parent = faultsDir();
  ws = PostgresWorkspace.create(parent);
});

afterAll(async () => {
  await restored?.stop('immediate');
  await primary?.stop('immediate');
  ws?.destroy();
  if (parent && !process.env.FAULTS_KEEP) fs.rmSync(parent, { recursive: true, force: true });
});

/** Commits BATCHES transactions of ROWS_PER_BATCH rows tagged `phase`; resolves their ids. */
async function commitRows(cluster: PostgresCluster, phase: string): Promise<number[]> {
  const ids: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const res = await cluster.db().query<{ id: number }>(
      `insert into drill_rows (phase, batch, note)
         select $1, $2, md5(random()::text) from generate_series(1, $3) returning id`,
      [phase, b, ROWS_PER_BATCH],
    );
    ids.push(...res.rows.map((r) => Number(r.id)));
  }
  return ids;
}

/** Switches to a new WAL segment and waits until the archiver has copied the one just closed. */
async function archiveCurrentWal(cluster: PostgresCluster): Promise<string> {
  const db = cluster.db();
  const { rows } = await db.query<{ wal: string }>('select pg_walfile_name(pg_switch_wal()) as wal');
  const wal = rows[0].wal;
  for (let i = 0; i < 300; i++) {
    const st = await db.query<{ last: string | null; failed: string }>(
      'select last_archived_wal as last, failed_count::text as failed from pg_stat_archiver',
    );
    if (st.rows[0].last && st.rows[0].last >= wal) return wal;
    await sleep(100);
  }
  throw new Error(`WAL segment ${wal} was not archived in 30 s:\n${cluster.log()}`);
}

it('restores a base backup plus archived WAL to a point in time into a fresh cluster', async () => {
  const began = Date.now();
  const archive = ws.path('wal-archive');
  const backup = ws.path('base-backup');
  await ws.run('mkdir', ['-p', archive]);

  // 1. The running cluster: WAL archiving on, as CloudNativePG runs it (there to object storage).
  primary = await PostgresCluster.init(ws, 'primary', [
    'wal_level = replica',
    'archive_mode = on',
    `archive_command = 'test ! -f ${archive}/%f && cp %p ${archive}/%f'`,
    'max_wal_senders = 4',
  ]);
  await primary.start();
  await primary.db('postgres').query('create database svc');
  await primary.db().query(
    `create table drill_rows (
       id bigserial primary key, phase text not null, batch int not null, note text not null,
       committed_at timestamptz not null default clock_timestamp())`,
  );
  const beforeBackup = await commitRows(primary, 'before-backup');

  // 2. The base backup: no WAL in it (-X none), so everything after its start must come from the archive.
  await ws.run('pg_basebackup', [
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'svc',
    '-D',
    backup,
    '-Fp',
    '-X',
    'none',
    '--checkpoint=fast',
    '--no-sync',
  ]);

  // 3. Rows after the backup, the recorded point, rows after the point.
  const afterBackup = await commitRows(primary, 'after-backup');
  const { rows: at } = await primary
    .db()
    .query<{ t: string }>(
      `select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00' as t`,
    );
  const target = at[0].t;
  await sleep(50);
  const afterTarget = await commitRows(primary, 'after-target');
  await archiveCurrentWal(primary);

  // 4. The cluster is lost.
  await primary.stop('immediate');
  primary = undefined;

  // 5. The restore: the backup into a fresh data folder, WAL from the archive, stop at the point.
  const restoredArchive = ws.path('wal-archive-restored');
  await ws.run('mkdir', ['-p', restoredArchive]);
  restored = await PostgresCluster.fromBackup(ws, 'restored', backup, [
    `restore_command = 'cp ${archive}/%f %p'`,
    `recovery_target_time = '${target}'`,
    "recovery_target_action = 'promote'",
    // Its own archive: never the one the lost cluster wrote.
    `archive_command = 'test ! -f ${restoredArchive}/%f && cp %p ${restoredArchive}/%f'`,
  ]);
  await restored.touch('recovery.signal');
  await restored.start();
  const db = restored.db();
  for (let i = 0; i < 600; i++) {
    const r = await db.query<{ rec: boolean }>('select pg_is_in_recovery() as rec');
    if (!r.rows[0].rec) break;
    await sleep(100);
  }
  expect((await db.query('select pg_is_in_recovery() as rec')).rows[0].rec).toBe(false);

  // 6. Every row committed before the point, none after it.
  const { rows } = await db.query<{ id: string; phase: string }>('select id, phase from drill_rows');
  const present = new Set(rows.map((r) => Number(r.id)));
  const missing = [...beforeBackup, ...afterBackup].filter((id) => !present.has(id));
  const leaked = afterTarget.filter((id) => present.has(id));
  expect(missing).toEqual([]);
  expect(leaked).toEqual([]);
  expect(rows.length).toBe(beforeBackup.length + afterBackup.length);
  const log = restored.log();
  expect(log).toMatch(/recovery stopping before commit of transaction/);
  expect(log).toMatch(/restored log file/);
  expect(log).toMatch(/selected new timeline ID: 2/);

  // 7. The restored cluster takes writes (on its new timeline).
  await db.query(`insert into drill_rows (phase, batch, note) values ('restored', 0, 'write')`);
  const tl = await db.query<{ wal: string }>('select pg_walfile_name(pg_current_wal_lsn()) as wal');
  expect(tl.rows[0].wal.slice(0, 8)).toBe('00000002');

  console.log(
    `restore drill: ${beforeBackup.length} rows before the backup, ${afterBackup.length} after it (from WAL), ` +
      `${afterTarget.length} after the point ${target} (absent); ${Math.round((Date.now() - began) / 1000)} s`,
  );
});
