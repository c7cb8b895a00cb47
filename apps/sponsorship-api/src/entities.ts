import { SeatEventEntity } from './seats/seat-event.entity';
import { SeatEntity } from './seats/seat.entity';

export const SPONSORSHIP_API_ENTITIES = [SeatEntity, SeatEventEntity];
