import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The token grants' SQL functions (token-grants.sql, every statement CREATE OR REPLACE), for the
 * migrations that apply them: the first, and any that ships a change to the file.
 */
export function tokenGrantsSql(): string {
  return readFileSync(join(__dirname, 'token-grants.sql'), 'utf8');
}
