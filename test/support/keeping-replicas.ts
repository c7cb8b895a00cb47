import type { HttpResponse } from './http';
import { startStack, useStarted } from './starters/app-process';
import { startAuthServer, type AuthServerHarness } from './starters/auth-server';
import { startCrewApi, type CrewApiHarness } from './starters/crew-api';

/**
 * Two crew-api replicas on one database: `keeping` keeps what its cache setting lets it keep,
 * `reading` (the setting at 0) reads everything from the database. `both` asks them the same
 * request and checks their answers equal, byte for byte, validators included: a kept answer is
 * never one the database would not give.
 */
export interface KeepingReplicas {
  readonly auth: AuthServerHarness;
  readonly keeping: CrewApiHarness;
  readonly reading: CrewApiHarness;
  both(path: string, token: string, headers?: Record<string, string>): Promise<HttpResponse>;
}

/** Starts them before the file's tests and stops them after; `setting` names the cache's size. */
export function keepingReplicas(setting: string, kept = '50'): KeepingReplicas {
  const replicas = useStarted(
    () =>
      startStack(async (keep) => {
        const auth = keep(await startAuthServer());
        const keeping = keep(await startCrewApi(auth, { [setting]: kept }));
        return { auth, keeping, reading: keep(await startCrewApi(auth, { [setting]: '0' })) };
      }),
    ['auth', 'keeping', 'reading'],
    90_000,
  );
  const seen = (r: HttpResponse) => ({
    status: r.status,
    etag: r.header('etag'),
    lastModified: r.header('last-modified'),
    body: r.text,
  });
  return {
    ...replicas,
    async both(path, token, headers = {}) {
      const a = await replicas.keeping.get(path, token, headers);
      const b = await replicas.reading.get(path, token, headers);
      expect(seen(a)).toEqual(seen(b));
      return a;
    },
  };
}
