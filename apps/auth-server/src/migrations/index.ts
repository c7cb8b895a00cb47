import { Baseline1763750000000 } from './1763750000000-baseline';

export const AUTH_SERVER_MIGRATIONS = [Baseline1763750000000];
