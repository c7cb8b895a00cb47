import { CreateOAuthTables1763750000000 } from './1763750000000-createOAuthTables';

export const AUTH_SERVER_MIGRATIONS = [CreateOAuthTables1763750000000];
