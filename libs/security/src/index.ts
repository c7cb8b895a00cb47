export * from './token-digest';
export * from './introspection-cache';
export * from './introspector';
export * from './principal';
export * from './token-authenticator';
