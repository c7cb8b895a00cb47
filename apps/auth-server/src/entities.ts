import { OutboxMessageEntity } from '@svc/platform';
import { AuthorizationCodeEntity } from './authorize/authorization-code.entity';
import { ConsentEntity } from './consents/consent.entity';
import { PartnerEntity } from './partners/partner.entity';
import { TokenPairEntity } from './tokens/token-pair.entity';
import { UserEntity } from './users/user.entity';

export const AUTH_SERVER_ENTITIES = [
  PartnerEntity,
  UserEntity,
  ConsentEntity,
  AuthorizationCodeEntity,
  TokenPairEntity,
  OutboxMessageEntity,
];
