import type { RecentTrendResponse, SeaTimeResponse } from '@svc/contracts';
import { Injectable } from '@nestjs/common';
import { newId, callerEtag, type Representation } from '@svc/platform';
import type { Principal } from '@svc/security';
import { RecordWriter } from '../records/record-writer.service';
import { noCrewRecord } from '../records/records.exception';
import { SnapshotCache } from '../records/snapshot-cache';
import type { SeaTimeEntryInput } from './dto/sea-time-entry.dto';
import {
  toRecentResponse,
  toSeaTimeEntryResponse,
  toSeaTimeResponse,
  type SeaTimeEntryResponse,
} from './dto/sea-time.response';
import { SeaTimeRepository, type SeaTimeVersion } from './sea-time.repository';

/** The sea-time totals and trends this replica keeps (SEA_TIME_CACHE_ENTRIES), by version. */
export class SeaTimeCache extends SnapshotCache<SeaTimeResponse | RecentTrendResponse> {}

/** The trend's Last-Modified: the record's last change, or the current month's start (the window moved) if later. */
export function trendLastModified(recordUpdatedAt: string, currentMonth: string): Date {
  const monthStart = Date.parse(`${currentMonth}-01T00:00:00Z`);
  return new Date(Math.max(Date.parse(recordUpdatedAt), monthStart));
}

/**
 * Totals and trend are read as of the record's version (its last write time): a matching
 * revalidation reads only the version, and an answer is aggregated once per replica.
 */
@Injectable()
export class SeaTimeService {
  constructor(
    private readonly seaTime: SeaTimeRepository,
    private readonly writer: RecordWriter,
    private readonly answers: SeaTimeCache,
  ) {}

  async totals(principal: Principal): Promise<Representation<SeaTimeResponse>> {
    const userId = principal.user_id;
    const version = await this.version(userId);
    const asOf = version.recordUpdatedAt.exact;
    return {
      etag: callerEtag(principal, 'sea-time.v1', userId, asOf),
      lastModified: new Date(version.recordUpdatedAt.iso),
      body: () =>
        this.kept(userId, `totals ${userId} ${asOf}`, async () => {
          const row = await this.seaTime.totals(userId, asOf);
          return row && toSeaTimeResponse(row, version);
        }),
    };
  }

  /** The ETag names the current month too: the same record shows other months next month. */
  async recent(principal: Principal): Promise<Representation<RecentTrendResponse>> {
    const userId = principal.user_id;
    const version = await this.version(userId);
    const asOf = version.recordUpdatedAt.exact;
    const month = version.currentMonth;
    return {
      etag: callerEtag(principal, 'sea-time-recent.v1', userId, asOf, month),
      lastModified: trendLastModified(version.recordUpdatedAt.iso, month),
      body: () =>
        this.kept(userId, `recent ${userId} ${asOf} ${month}`, async () => {
          const row = await this.seaTime.recent(userId, asOf, month);
          return row && toRecentResponse(row, version);
        }),
    };
  }

  private async version(userId: string): Promise<SeaTimeVersion> {
    const version = await this.seaTime.version(userId);
    if (!version) throw noCrewRecord(userId);
    return version;
  }

  /** This replica's answer for `key`, aggregated once; a member gone meanwhile is a 404. */
  private async kept<T extends SeaTimeResponse | RecentTrendResponse>(
    userId: string,
    key: string,
    read: () => Promise<T | undefined>,
  ): Promise<T> {
    const answer = await this.answers.get(key, read);
    if (!answer) throw noCrewRecord(userId);
    return answer;
  }

  /** A new entry changes the totals: it commits with `user.sea_time.updated`. */
  addEntry(userId: string, input: SeaTimeEntryInput): Promise<SeaTimeEntryResponse> {
    return this.writer.write(userId, async (write) => {
      const time = await write.stamp();
      const entry = { id: newId('ste'), userId, ...input, createdAt: time.exact };
      await this.seaTime.insertEntry(write.tx, entry);
      write.emit('user.sea_time.updated');
      return toSeaTimeEntryResponse(entry);
    });
  }
}
