import { SecretBox } from '../crypto/secrets';
import type { RecipientRow, WebhookRecipientsRepository } from './webhook-recipients.repository';
import { scopeForEvent, WebhookRecipientsService } from './webhook-recipients.service';

const box = new SecretBox(Buffer.alloc(32, 7).toString('base64'));

function fakeRepository(rows: RecipientRow[]) {
  const calls: string[] = [];
  const repo = {
    consenting: (userId: string, scope: string) => {
      calls.push(`consenting ${userId} ${scope}`);
      return Promise.resolve(rows);
    },
    named: (clientId: string) => {
      calls.push(`named ${clientId}`);
      return Promise.resolve(rows);
    },
  } as unknown as WebhookRecipientsRepository;
  return { repo, calls };
}

describe('scopeForEvent (interface.md, Events)', () => {
  it('maps record events to their read scope and the partner events to none', () => {
    expect(scopeForEvent('user.profile.updated')).toBe('profile:read');
    expect(scopeForEvent('user.sea_time.updated')).toBe('seatime:read');
    expect(scopeForEvent('user.vessels.updated')).toBe('vessels:read');
    expect(scopeForEvent('user.consent.revoked')).toBeNull();
    expect(scopeForEvent('webhook.test')).toBeNull();
  });
});

describe('WebhookRecipientsService', () => {
  const row: RecipientRow = {
    clientId: 'p1',
    webhookUrl: 'https://p1.example/hook',
    sealedSecrets: [box.seal('whsec_current'), box.seal('whsec_next')],
  };

  it('asks for consenting partners with the scope and opens their secrets', async () => {
    const { repo, calls } = fakeRepository([row]);
    const answer = await new WebhookRecipientsService(repo, box).find({
      user_id: 'usr_1',
      event_type: 'user.vessels.updated',
    });
    expect(calls).toEqual(['consenting usr_1 vessels:read']);
    expect(answer).toEqual({
      recipients: [
        { client_id: 'p1', webhook_url: 'https://p1.example/hook', secrets: ['whsec_current', 'whsec_next'] },
      ],
    });
  });

  it('names only the partner of a consent.revoked event, and nobody without a client_id', async () => {
    const { repo, calls } = fakeRepository([row]);
    const service = new WebhookRecipientsService(repo, box);
    await service.find({ user_id: 'usr_1', event_type: 'user.consent.revoked', client_id: 'p1' });
    expect(await service.find({ user_id: 'usr_1', event_type: 'webhook.test' })).toEqual({ recipients: [] });
    expect(calls).toEqual(['named p1']);
  });
});
