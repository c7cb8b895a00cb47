import { CreateDeliveries1763900000000 } from './1763900000000-createDeliveries';

export const WEBHOOK_DISPATCHER_MIGRATIONS = [CreateDeliveries1763900000000];
