import type { RecentTrendResponse, SeaTimeResponse } from '@svc/contracts';
import { Injectable } from '@nestjs/common';
import { newId } from '@svc/platform';
import type { Principal } from '@svc/security';
import { callerEtag, type Representation } from '../http/conditional';
import { RecordWriter } from '../records/record-writer.service';
import { noCrewRecord } from '../records/records.exception';
import type { SeaTimeEntryInput } from './dto/sea-time-entry.dto';
import {
  toRecentResponse,
  toSeaTimeEntryResponse,
  toSeaTimeResponse,
  type SeaTimeEntryResponse,
} from './dto/sea-time.response';
import { SeaTimeRepository } from './sea-time.repository';

/**
 * Last-Modified of the trend: the record's last change, or the start of the current month if
 * later, because the window of twelve months moves on at each month's start even when nothing
 * was written.
 */
export function trendLastModified(recordUpdatedAt: string, currentMonth: string): Date {
  const monthStart = Date.parse(`${currentMonth}-01T00:00:00Z`);
  return new Date(Math.max(Date.parse(recordUpdatedAt), monthStart));
}

@Injectable()
export class SeaTimeService {
  constructor(
    private readonly seaTime: SeaTimeRepository,
    private readonly writer: RecordWriter,
  ) {}

  async totals(principal: Principal): Promise<Representation<SeaTimeResponse>> {
    const row = await this.seaTime.totals(principal.user_id);
    if (!row) throw noCrewRecord(principal.user_id);
    return {
      body: () => toSeaTimeResponse(row),
      etag: callerEtag(principal, 'sea-time.v1', row.userId, row.recordUpdatedAtExact),
      lastModified: new Date(row.recordUpdatedAt),
    };
  }

  /** The ETag names the current month too: the same record shows other months next month. */
  async recent(principal: Principal): Promise<Representation<RecentTrendResponse>> {
    const row = await this.seaTime.recent(principal.user_id);
    if (!row) throw noCrewRecord(principal.user_id);
    return {
      body: () => toRecentResponse(row),
      etag: callerEtag(
        principal,
        'sea-time-recent.v1',
        row.userId,
        row.recordUpdatedAtExact,
        row.currentMonth,
      ),
      lastModified: trendLastModified(row.recordUpdatedAt, row.currentMonth),
    };
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
