import { CreateOAuthTables1763750000000 } from './1763750000000-createOAuthTables';
import { OutboxRetention1764200000001 } from './1764200000001-outboxRetention';

export const AUTH_SERVER_MIGRATIONS = [CreateOAuthTables1763750000000, OutboxRetention1764200000001];
