import { CreateOAuthTables1763750000000 } from './1763750000000-createOAuthTables';
import { RetentionIndexes1764200000001 } from './1764200000001-retentionIndexes';
import { RefreshTokenSuccessor1764300000000 } from './1764300000000-refreshTokenSuccessor';
import { OutboxTraceContext1764400000000 } from './1764400000000-outboxTraceContext';
import { TokenRefreshFunction1764500000000 } from './1764500000000-tokenRefreshFunction';
import { TokenExchangeFunction1764500000001 } from './1764500000001-tokenExchangeFunction';
import { TokenRefreshExpectedAccess1764500000002 } from './1764500000002-tokenRefreshExpectedAccess';
import { TokenGrantsFewerStatements1764700000000 } from './1764700000000-tokenGrantsFewerStatements';
import { TokenRefreshBatch1764800000000 } from './1764800000000-tokenRefreshBatch';
import { TokenGrantsIndexPlans1765000000000 } from './1765000000000-tokenGrantsIndexPlans';
import { TokenExchangeBatch1765100000000 } from './1765100000000-tokenExchangeBatch';
import { TokenRefreshRotationByPrimaryKey1765200000000 } from './1765200000000-tokenRefreshRotationByPrimaryKey';
import { TokenFamilies1765300000000 } from './1765300000000-tokenFamilies';

export const AUTH_SERVER_MIGRATIONS = [
  CreateOAuthTables1763750000000,
  RetentionIndexes1764200000001,
  RefreshTokenSuccessor1764300000000,
  OutboxTraceContext1764400000000,
  TokenRefreshFunction1764500000000,
  TokenExchangeFunction1764500000001,
  TokenRefreshExpectedAccess1764500000002,
  TokenGrantsFewerStatements1764700000000,
  TokenRefreshBatch1764800000000,
  TokenGrantsIndexPlans1765000000000,
  TokenExchangeBatch1765100000000,
  TokenRefreshRotationByPrimaryKey1765200000000,
  TokenFamilies1765300000000,
];
