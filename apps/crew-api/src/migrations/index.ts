import { CreateOutbox1763740000000 } from './1763740000000-createOutbox';
import { CreateCrewRecords1763770000000 } from './1763770000000-createCrewRecords';
import { MembershipSeat1764000000000 } from './1764000000000-membershipSeat';
import { OutboxRetention1764200000000 } from './1764200000000-outboxRetention';
import { MembershipDroppedSeat1764200000003 } from './1764200000003-membershipDroppedSeat';
import { OutboxTraceContext1764400000000 } from './1764400000000-outboxTraceContext';
import { SeaTimeAsOf1764900000000 } from './1764900000000-seaTimeAsOf';

export const CREW_API_MIGRATIONS = [
  CreateOutbox1763740000000,
  CreateCrewRecords1763770000000,
  MembershipSeat1764000000000,
  OutboxRetention1764200000000,
  MembershipDroppedSeat1764200000003,
  OutboxTraceContext1764400000000,
  SeaTimeAsOf1764900000000,
];
