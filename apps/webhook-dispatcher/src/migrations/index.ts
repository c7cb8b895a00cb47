import { CreateDeliveries1763900000000 } from './1763900000000-createDeliveries';
import { Redeliveries1764100000000 } from './1764100000000-redeliveries';
import { DeliveryLogRetention1764200000002 } from './1764200000002-deliveryLogRetention';
import { PartnerSelfService1764600000000 } from './1764600000000-partnerSelfService';
import { PartnerFairness1765000000000 } from './1765000000000-partnerFairness';
import { PortalActions1765100000001 } from './1765100000001-portalActions';
import { AttemptLeases1765300000000 } from './1765300000000-attemptLeases';
import { DeliveryBacklog1765400000000 } from './1765400000000-deliveryBacklog';
import { PortalActionsRetention1765400000001 } from './1765400000001-portalActionsRetention';
import { EndpointCheckBudget1765500000000 } from './1765500000000-endpointCheckBudget';
import { PortalKeyRotation1765600000001 } from './1765600000001-portalKeyRotation';

export const WEBHOOK_DISPATCHER_MIGRATIONS = [
  CreateDeliveries1763900000000,
  Redeliveries1764100000000,
  DeliveryLogRetention1764200000002,
  PartnerSelfService1764600000000,
  PartnerFairness1765000000000,
  PortalActions1765100000001,
  AttemptLeases1765300000000,
  DeliveryBacklog1765400000000,
  PortalActionsRetention1765400000001,
  EndpointCheckBudget1765500000000,
  PortalKeyRotation1765600000001,
];
