// Seat tables arrive with the sponsorship feature; the schema itself is created by the CLI.
export const SPONSORSHIP_API_MIGRATIONS = [];
