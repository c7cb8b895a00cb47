import { Injectable } from '@nestjs/common';
import { newId, strongEtag, scopeKey, type Representation } from '@svc/platform';
import { API_LIMITS, type VesselPageResponse } from '@svc/contracts';
import type { Principal } from '@svc/security';
import { applyPatch, differs } from '../records/patch';
import { RecordWriter, type RecordWrite } from '../records/record-writer.service';
import { noCrewRecord, RecordsException } from '../records/records.exception';
import { usToMs } from '../records/sql-time';
import { CursorCodec } from './cursor';
import { SnapshotCache } from '../records/snapshot-cache';
import type { VesselPeriodPatch } from './dto/vessel-period.dto';
import type { VesselPeriod } from './vessel-period-version.entity';
import type { VesselsQuery } from './dto/vessels-query.dto';
import {
  toVesselPeriodResponse,
  toWrittenPeriodResponse,
  type WrittenPeriodResponse,
} from './dto/vessels.response';
import { VesselsRepository, type PeriodVersion } from './vessels.repository';

/** The vessel-history pages this replica keeps (VESSEL_PAGE_CACHE_ENTRIES). */
export class VesselPageCache extends SnapshotCache<VesselPageResponse> {}

@Injectable()
export class VesselsService {
  constructor(
    private readonly vessels: VesselsRepository,
    private readonly writer: RecordWriter,
    private readonly cursors: CursorCodec,
    private readonly pages: VesselPageCache,
  ) {}

  /**
   * A scan reads every page as of its `as_of` (vessels_updated_at at its first page), so changes
   * meanwhile neither repeat nor skip periods. The ETag needs only the snapshot, position and size:
   * a matching revalidation reads no period, and a page is read once per replica.
   */
  async page(principal: Principal, query: VesselsQuery): Promise<Representation<VesselPageResponse>> {
    const userId = principal.user_id;
    const cursor = query.cursor === undefined ? undefined : this.cursors.decode(userId, query.cursor);
    const limit = query.limit ?? cursor?.limit ?? API_LIMITS.pageLimitDefault;
    const asOf = cursor?.asOf ?? (await this.vessels.snapshot(userId));
    if (asOf === undefined) throw noCrewRecord(userId);
    const after = cursor && { start: cursor.start, id: cursor.id };
    const position = after ? [after.start, after.id] : null;
    return {
      etag: strongEtag('vessels.v1', userId, asOf, scopeKey(principal), principal.client_id, position, limit),
      lastModified: new Date(usToMs(asOf)),
      body: async () => {
        const key = JSON.stringify([userId, asOf, position, limit]);
        const page = await this.pages.get(key, () => this.read(userId, asOf, limit, after));
        if (!page) throw noCrewRecord(userId);
        return page;
      },
    };
  }

  /** Fetches limit + 1 rows to know whether another page follows. */
  private async read(
    userId: string,
    asOf: string,
    limit: number,
    after: { start: string; id: string } | undefined,
  ): Promise<VesselPageResponse | undefined> {
    const page = await this.vessels.page(userId, limit + 1, asOf, after);
    if (!page) return undefined;
    const shown = page.periods.slice(0, limit);
    const last = shown[shown.length - 1];
    const next =
      page.periods.length > limit && last
        ? this.cursors.encode(userId, { asOf: page.asOfExact, start: last.startExact, id: last.id, limit })
        : null;
    return {
      user_id: page.userId,
      record_updated_at: page.asOf,
      vessels: shown.map(toVesselPeriodResponse),
      next_cursor: next,
    };
  }

  /** A new period: `user.vessels.updated`, and `user.sea_time.updated` if it is a new vessel. */
  addPeriod(userId: string, input: VesselPeriod): Promise<WrittenPeriodResponse> {
    return this.writer.write(userId, async (write) => {
      const servedBefore = await this.vessels.vesselsServed(write.tx, userId);
      const time = await write.stamp({ vessels: true });
      const version: PeriodVersion = { id: newId('vp'), version: 1, userId, ...input, validFrom: time.exact };
      await this.vessels.insert(write.tx, version);
      await this.announce(write, userId, servedBefore);
      return toWrittenPeriodResponse(version);
    });
  }

  /** Closes the current version and adds the next (older scans still read the old one); no change, no write. */
  amendPeriod(userId: string, periodId: string, patch: VesselPeriodPatch): Promise<WrittenPeriodResponse> {
    return this.writer.write(userId, async (write) => {
      const current = await this.vessels.current(write.tx, userId, periodId);
      if (!current) {
        throw new RecordsException(
          'period_not_found',
          `Crew member ${userId} has no vessel period ${periodId}.`,
        );
      }
      const next = applyPatch(current, patch);
      if (next.periodEnd.getTime() < next.periodStart.getTime()) {
        // Checked again against the stored period: only one of the two dates may have been sent.
        throw new RecordsException('invalid_period', 'period_end must not be before period_start.');
      }
      if (!differs(current, next)) return toWrittenPeriodResponse(current);
      const servedBefore = await this.vessels.vesselsServed(write.tx, userId);
      const time = await write.stamp({ vessels: true });
      await this.vessels.close(write.tx, periodId, current.version, time.exact);
      const version: PeriodVersion = { ...next, version: current.version + 1, validFrom: time.exact };
      await this.vessels.insert(write.tx, version);
      await this.announce(write, userId, servedBefore);
      return toWrittenPeriodResponse(version);
    });
  }

  /** Vessel periods changed; the totals changed too when the number of distinct vessels did. */
  private async announce(write: RecordWrite, userId: string, servedBefore: number): Promise<void> {
    write.emit('user.vessels.updated');
    if ((await this.vessels.vesselsServed(write.tx, userId)) !== servedBefore)
      write.emit('user.sea_time.updated');
  }
}
