import { Baseline1763750000000 } from './1763750000000-baseline';
import { AccessReads1765100000000 } from './1765100000000-accessReads';

export const AUTH_SERVER_MIGRATIONS = [Baseline1763750000000, AccessReads1765100000000];
