// Browser-session tables arrive with the consent feature; the schema itself is created by the CLI.
export const CONSENT_UI_MIGRATIONS = [];
