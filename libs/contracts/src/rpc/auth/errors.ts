/** An auth-server RPC error the caller should show (not a bug), e.g. `temporarily_unavailable`. */
export type AuthRpcError = 'temporarily_unavailable';
