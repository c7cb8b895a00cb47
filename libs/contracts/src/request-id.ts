/** docs/rules.md: an incoming X-Request-Id matching this is kept; anything else is replaced. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
/** The nginx spelling of the same rule, kept next to it so the two cannot drift apart. */
export const REQUEST_ID_NGINX_REGEX = '^[A-Za-z0-9._:-]{1,128}$';
