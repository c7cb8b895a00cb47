/** The browser's address for sign-in throttling: the one the gateway saw (see @svc/security). */
export { clientAddress } from '@svc/security';
