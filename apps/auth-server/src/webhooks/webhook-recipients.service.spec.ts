import { SecretBox } from '../crypto/secrets';
import type {
  ConsentQuestion,
  RecipientRow,
  WebhookRecipientsRepository,
} from './webhook-recipients.repository';
import { SCOPE_FOR_EVENT, WebhookRecipientsService } from './webhook-recipients.service';

const box = new SecretBox(Buffer.alloc(32, 7).toString('base64'));

/** Every member consents to every partner of `rows`; `named` finds the partners of `rows`. */
function fakeRepository(rows: RecipientRow[]) {
  const calls: string[] = [];
  const repo = {
    consenting: (questions: readonly ConsentQuestion[]) => {
      if (questions.length > 0)
        calls.push(`consenting ${questions.map((q) => `${q.userId} ${q.scope}`).join(', ')}`);
      return Promise.resolve(questions.flatMap((_q, index) => rows.map((row) => ({ index, row }))));
    },
    named: (clientIds: readonly string[]) => {
      if (clientIds.length > 0) calls.push(`named ${clientIds.join(', ')}`);
      return Promise.resolve(rows.filter((r) => clientIds.includes(r.clientId)));
    },
  } as unknown as WebhookRecipientsRepository;
  return { repo, calls };
}

describe('SCOPE_FOR_EVENT (docs/rules.md, Events)', () => {
  it('maps record events to their read scope and the partner events to none', () => {
    expect(SCOPE_FOR_EVENT['user.profile.updated']).toBe('profile:read');
    expect(SCOPE_FOR_EVENT['user.sea_time.updated']).toBe('seatime:read');
    expect(SCOPE_FOR_EVENT['user.vessels.updated']).toBe('vessels:read');
    expect(SCOPE_FOR_EVENT['user.consent.revoked']).toBeNull();
    expect(SCOPE_FOR_EVENT['webhook.test']).toBeNull();
  });
});

describe('WebhookRecipientsService', () => {
  const row: RecipientRow = {
    clientId: 'p1',
    webhookUrl: 'https://p1.example/hook',
    sealedSecrets: [box.seal('whsec_current'), box.seal('whsec_next')],
    sealedKeys: [{ id: 'whk_1', privateKey: box.seal('pkcs8-der-base64') }],
  };

  it('asks for consenting partners with the scope and opens their secrets', async () => {
    const { repo, calls } = fakeRepository([row]);
    const answer = await new WebhookRecipientsService(repo, box).findMany([
      { user_id: 'usr_1', event_type: 'user.vessels.updated' },
    ]);
    expect(calls).toEqual(['consenting usr_1 vessels:read']);
    expect(answer).toEqual({
      partners: [
        {
          client_id: 'p1',
          webhook_url: 'https://p1.example/hook',
          secrets: ['whsec_current', 'whsec_next'],
          signing_keys: [{ id: 'whk_1', private_key: 'pkcs8-der-base64' }],
        },
      ],
      answers: [{ client_ids: ['p1'] }],
    });
  });

  it('names only the partner of a consent.revoked event, and nobody without a client_id', async () => {
    const { repo, calls } = fakeRepository([row]);
    const service = new WebhookRecipientsService(repo, box);
    await service.findMany([{ user_id: 'usr_1', event_type: 'user.consent.revoked', client_id: 'p1' }]);
    expect(await service.findMany([{ user_id: 'usr_1', event_type: 'webhook.test' }])).toEqual({
      partners: [],
      answers: [{ client_ids: [] }],
    });
    expect(calls).toEqual(['named p1']);
  });

  it("tells crew-api a test event's URL and nothing of the signing secrets", async () => {
    const { repo } = fakeRepository([row]);
    const service = new WebhookRecipientsService(repo, box);
    const answer = await service.target({ user_id: 'usr_1', client_id: 'p1' });
    expect(answer).toEqual({ webhook_url: 'https://p1.example/hook' });
    expect(JSON.stringify(answer)).not.toContain('whsec_');
    expect(await service.target({ user_id: 'usr_1', client_id: 'p9' })).toEqual({ webhook_url: null });
  });

  it('answers a batch with one statement per kind of question, each partner once', async () => {
    const other: RecipientRow = {
      clientId: 'p2',
      webhookUrl: 'https://p2.example/hook',
      sealedSecrets: [],
      sealedKeys: [],
    };
    const { repo, calls } = fakeRepository([row, other]);
    const answer = await new WebhookRecipientsService(repo, box).findMany([
      { user_id: 'usr_1', event_type: 'user.profile.updated' },
      { user_id: 'usr_2', event_type: 'webhook.test', client_id: 'p1' },
      { user_id: 'usr_3', event_type: 'user.consent.revoked', client_id: 'p9' },
      { user_id: 'usr_2', event_type: 'user.sea_time.updated' },
    ]);
    expect(calls).toEqual(['consenting usr_1 profile:read, usr_2 seatime:read', 'named p1, p9']);
    // p2 has no secret to sign with: it receives nothing, and is not listed.
    expect(answer).toEqual({
      partners: [
        {
          client_id: 'p1',
          webhook_url: 'https://p1.example/hook',
          secrets: ['whsec_current', 'whsec_next'],
          signing_keys: [{ id: 'whk_1', private_key: 'pkcs8-der-base64' }],
        },
      ],
      answers: [{ client_ids: ['p1'] }, { client_ids: ['p1'] }, { client_ids: [] }, { client_ids: ['p1'] }],
    });
  });
});
