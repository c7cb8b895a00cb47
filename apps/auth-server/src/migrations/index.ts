import { Baseline1763750000000 } from './1763750000000-baseline';
import { PortalLinks1765100000000 } from './1765100000000-portalLinks';
import { AccessReads1765200000000 } from './1765200000000-accessReads';
import { PartnerFrameOrigins1765400000000 } from './1765400000000-partnerFrameOrigins';
import { WebhookSigningKeys1765600000000 } from './1765600000000-webhookSigningKeys';
import { TokenGrants1765610000000 } from './1765610000000-tokenGrants';

export const AUTH_SERVER_MIGRATIONS = [
  Baseline1763750000000,
  PortalLinks1765100000000,
  AccessReads1765200000000,
  PartnerFrameOrigins1765400000000,
  WebhookSigningKeys1765600000000,
  TokenGrants1765610000000,
];
