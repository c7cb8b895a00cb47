import { CreateSessions1763760000000 } from './1763760000000-createSessions';

export const CONSENT_UI_MIGRATIONS = [CreateSessions1763760000000];
