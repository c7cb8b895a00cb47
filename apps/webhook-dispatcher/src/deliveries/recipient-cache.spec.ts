import type { WebhookRecipient } from '@svc/contracts';
import { RecipientCache } from './recipient-cache';

const p1: WebhookRecipient = { client_id: 'p1', webhook_url: 'https://p1.example/h', secrets: ['whsec_1'] };
const p2: WebhookRecipient = { client_id: 'p2', webhook_url: 'https://p2.example/h', secrets: ['whsec_2'] };

describe('RecipientCache', () => {
  let now = 1_000;
  const clock = () => now;

  it('answers for the partner, member and event type of an answer, until the TTL is over', () => {
    const cache = new RecipientCache(5000, 100, clock);
    cache.remember('usr_1', 'user.profile.updated', [p1, p2]);
    expect(cache.get('p1', 'usr_1', 'user.profile.updated')).toEqual(p1);
    expect(cache.get('p2', 'usr_1', 'user.profile.updated')).toEqual(p2);
    // Another member, another event type (another scope): not known.
    expect(cache.get('p1', 'usr_2', 'user.profile.updated')).toBeUndefined();
    expect(cache.get('p1', 'usr_1', 'user.vessels.updated')).toBeUndefined();
    now += 4999;
    expect(cache.get('p1', 'usr_1', 'user.profile.updated')).toEqual(p1);
    now += 1;
    expect(cache.get('p1', 'usr_1', 'user.profile.updated')).toBeUndefined();
  });

  it('takes a newer answer (a rotated secret) over the one it held', () => {
    const cache = new RecipientCache(5000, 100, clock);
    cache.remember('usr_1', 'user.profile.updated', [p1]);
    const rotated = { ...p1, secrets: ['whsec_1', 'whsec_next'] };
    cache.remember('usr_1', 'user.profile.updated', [rotated]);
    expect(cache.get('p1', 'usr_1', 'user.profile.updated')).toEqual(rotated);
  });

  it('holds at most its bound, dropping the oldest first', () => {
    const cache = new RecipientCache(5000, 2, clock);
    cache.remember('usr_1', 'user.profile.updated', [p1]);
    cache.remember('usr_2', 'user.profile.updated', [p1]);
    cache.remember('usr_3', 'user.profile.updated', [p1]);
    expect(cache.get('p1', 'usr_1', 'user.profile.updated')).toBeUndefined();
    expect(cache.get('p1', 'usr_3', 'user.profile.updated')).toEqual(p1);
  });

  it('keeps nothing with a TTL of 0', () => {
    const cache = new RecipientCache(0, 100, clock);
    cache.remember('usr_1', 'user.profile.updated', [p1]);
    expect(cache.get('p1', 'usr_1', 'user.profile.updated')).toBeUndefined();
  });
});
