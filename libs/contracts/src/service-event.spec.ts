import { ContractViolation } from './rpc/rpc';
import { parseServiceEvent } from './service-event';

describe('parseServiceEvent', () => {
  const event = {
    id: 'evt_1',
    type: 'user.vessels.updated',
    user_id: 'usr_1',
    created_at: '2026-11-21T10:00:00Z',
  };

  it('accepts an event, with or without the partner it concerns', () => {
    expect(parseServiceEvent(event)).toEqual(event);
    expect(parseServiceEvent({ ...event, type: 'webhook.test', client_id: 'acme' })).toEqual({
      ...event,
      type: 'webhook.test',
      client_id: 'acme',
    });
  });

  it('keeps the delivery id a webhook.test event was announced with', () => {
    const test = { ...event, type: 'webhook.test', client_id: 'acme', delivery_id: 'dlv_1' };
    expect(parseServiceEvent(test)).toEqual(test);
    expect(() => parseServiceEvent({ ...test, delivery_id: 'x' })).toThrow(ContractViolation);
  });

  it.each([
    ['an id without the evt_ prefix', { ...event, id: 'x1' }],
    ['an unknown type', { ...event, type: 'user.deleted' }],
    ['a time that is not a time', { ...event, created_at: 'yesterday' }],
    ['no user', { ...event, user_id: undefined }],
    ['not an object', 'evt_1'],
  ])('refuses %s', (_name, input) => {
    expect(() => parseServiceEvent(input)).toThrow(ContractViolation);
  });
});
