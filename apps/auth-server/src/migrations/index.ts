// auth-server's tables arrive with the OAuth feature; the schema itself is created by the CLI.
export const AUTH_SERVER_MIGRATIONS = [];
