import { CreateOutbox1763740000000 } from './1763740000000-createOutbox';
import { CreateCrewRecords1763770000000 } from './1763770000000-createCrewRecords';

export const CREW_API_MIGRATIONS = [CreateOutbox1763740000000, CreateCrewRecords1763770000000];
