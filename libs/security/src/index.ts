export * from './authentication/introspection-cache';
export * from './authentication/introspector';
export * from './authentication/bearer-auth.guard';
export * from './limits/rate-limit.config';
export {
  RateLimitGuard,
  RateLimiter,
  RedisRateLimiter,
  UnconfiguredRateLimiter,
  type RateLimitDecision,
  type TokenCount,
  type TokenKeys,
} from './limits/rate-limit';
export * from './authentication/bearer-auth.decorator';
export * from './security.module';
export * from './authentication/partner-verifier';
export * from './authentication/partner.guard';
export * from './limits/client-address';
export * from './limits/failed-auth-limiter';
