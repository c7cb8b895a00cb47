import { ContractViolation } from './rpc/rpc';
import { EVENT_BATCH_MAX_EVENTS } from './messaging';
import { parseEventBatch, parseServiceEvent } from './service-event';

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

describe('parseEventBatch', () => {
  const payload = {
    id: 'evt_1',
    type: 'user.vessels.updated',
    user_id: 'usr_1',
    created_at: '2026-11-21T10:00:00Z',
  };
  const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

  it('reads each entry, with or without the trace it was written under, leaving the events unread', () => {
    const entries = parseEventBatch({
      events: [
        { message_id: 'm1', traceparent, payload },
        { message_id: 'm2', payload: { not: 'an event' } },
      ],
    });
    expect(entries).toEqual([
      { message_id: 'm1', traceparent, payload },
      { message_id: 'm2', payload: { not: 'an event' } },
    ]);
  });

  it.each([
    ['not an object', 'events'],
    ['no events', {}],
    ['an empty batch', { events: [] }],
    [
      'more events than a batch may hold',
      {
        events: Array.from({ length: EVENT_BATCH_MAX_EVENTS + 1 }, (_, i) => ({
          message_id: `m${i}`,
          payload,
        })),
      },
    ],
    ['an entry without a message id', { events: [{ payload }] }],
    ['an entry without its event', { events: [{ message_id: 'm1' }] }],
    ['an entry whose event is not an object', { events: [{ message_id: 'm1', payload: 'evt_1' }] }],
    [
      'a traceparent longer than one',
      { events: [{ message_id: 'm1', traceparent: `${traceparent}-xxxx`, payload }] },
    ],
  ])('refuses %s', (_name, input) => {
    expect(() => parseEventBatch(input)).toThrow(ContractViolation);
  });
});
