import { APP_SCHEMAS, RPC_QUEUES } from '@svc/contracts';
import type { AppDefinition } from '@svc/platform';
import { SecurityModule } from '@svc/security';
import { SPONSORSHIP_API_CONFIG } from './config';
import { MemberSponsorshipsModule } from './member-sponsorships/member-sponsorships.module';
import { MembersLeftModule } from './members-left/members-left.module';
import { SPONSORSHIP_API_MIGRATIONS } from './migrations';
import { PortalSeatsModule } from './portal-seats/portal-seats.module';
import { seatsProblem } from './seats/seats-problem.mapper';
import { SeatsModule } from './seats/seats.module';
import { seedSandbox } from './seed/sandbox-seed';

/** sponsorship-api: partners' sponsored seats (`/v1/partners/*`) and, over RPC, consent-ui's views of them. */
export const SPONSORSHIP_API: AppDefinition<typeof SPONSORSHIP_API_CONFIG> = {
  name: 'sponsorship-api',
  config: SPONSORSHIP_API_CONFIG,
  database: {
    schema: APP_SCHEMAS['sponsorship-api'],
    migrations: SPONSORSHIP_API_MIGRATIONS,
  },
  redis: true,
  rpcQueue: RPC_QUEUES.sponsorshipApi,
  mapDomainError: seatsProblem,
  seed: seedSandbox,
  module: class SponsorshipApiModule {},
  modules: [
    SecurityModule.forRoot({ partners: true }),
    SeatsModule,
    MembersLeftModule,
    MemberSponsorshipsModule,
    PortalSeatsModule,
  ],
};
