/**
 * An RPC handler of auth-server that cannot do its work for a reason the caller should show
 * (rather than a bug) answers with this shape as its error; e.g. `temporarily_unavailable`
 * when a revocation could not be made visible to every replica yet.
 */
export const AUTH_RPC_ERRORS = ['temporarily_unavailable'] as const;
export type AuthRpcError = (typeof AUTH_RPC_ERRORS)[number];
