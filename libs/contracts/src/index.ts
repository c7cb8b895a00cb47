export * from './apps';
export * from './routes';
export * from './problems';
export * from './request-id';
export * from './messaging';
export * from './rpc/rpc';
export * from './rpc/auth-ping';
