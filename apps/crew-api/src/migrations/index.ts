import { CreateOutbox1763740000000 } from './1763740000000-createOutbox';

export const CREW_API_MIGRATIONS = [CreateOutbox1763740000000];
