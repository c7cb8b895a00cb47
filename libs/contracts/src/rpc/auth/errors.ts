/** An auth-server RPC error the caller should show (not a bug), e.g. `temporarily_unavailable`. */
export const AUTH_RPC_ERRORS = ['temporarily_unavailable'] as const;
export type AuthRpcError = (typeof AUTH_RPC_ERRORS)[number];
