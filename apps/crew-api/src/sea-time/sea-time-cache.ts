import type { RecentTrendResponse, SeaTimeResponse } from '@svc/contracts';
import { SnapshotCache } from '../records/snapshot-cache';

/** The sea-time totals and trends this replica keeps (SEA_TIME_CACHE_ENTRIES), by version. */
export class SeaTimeCache extends SnapshotCache<SeaTimeResponse | RecentTrendResponse> {}
