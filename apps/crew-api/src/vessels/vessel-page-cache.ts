import type { VesselPageResponse } from '@svc/contracts';
import { SnapshotCache } from '../records/snapshot-cache';

/** The vessel-history pages this replica keeps (VESSEL_PAGE_CACHE_ENTRIES). */
export class VesselPageCache extends SnapshotCache<VesselPageResponse> {}
