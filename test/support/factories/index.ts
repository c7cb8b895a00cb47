export * from './pkce';
export * from './partners';
export * from './authorize';
export * from './tokens';
