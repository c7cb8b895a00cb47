import { CreateSessions1763760000000 } from './1763760000000-createSessions';
import { AddSessionLastSeen1763770000000 } from './1763770000000-addSessionLastSeen';
import { CreatePortalSessions1765100000002 } from './1765100000002-createPortalSessions';

export const CONSENT_UI_MIGRATIONS = [
  CreateSessions1763760000000,
  AddSessionLastSeen1763770000000,
  CreatePortalSessions1765100000002,
];
