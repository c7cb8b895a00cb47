import { OutboxMessageEntity } from '@svc/platform';
import { CrewMemberEntity } from './members/crew-member.entity';
import { MembershipEntity } from './members/membership.entity';
import { SeaTimeEntryEntity } from './sea-time/sea-time-entry.entity';
import { VesselPeriodVersionEntity } from './vessels/vessel-period-version.entity';

export const CREW_API_ENTITIES = [
  CrewMemberEntity,
  MembershipEntity,
  SeaTimeEntryEntity,
  VesselPeriodVersionEntity,
  OutboxMessageEntity,
];
