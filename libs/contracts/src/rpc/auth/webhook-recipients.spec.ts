import { ContractViolation } from '../rpc';
import {
  AUTH_WEBHOOK_RECIPIENTS_BATCH,
  recipientsOfBatch,
  WEBHOOK_RECIPIENTS_MAX_QUESTIONS,
} from './webhook-recipients';

const p1 = { client_id: 'p1', webhook_url: 'https://p1.example/hook', secrets: ['whsec_a'] };

describe('auth.webhooks.recipients.batch', () => {
  it('reads a batch of questions, keeping client_id only where it was given', () => {
    expect(
      AUTH_WEBHOOK_RECIPIENTS_BATCH.parseRequest({
        questions: [
          { user_id: 'usr_1', event_type: 'user.profile.updated' },
          { user_id: 'usr_1', event_type: 'webhook.test', client_id: 'p1' },
        ],
      }),
    ).toEqual({
      questions: [
        { user_id: 'usr_1', event_type: 'user.profile.updated' },
        { user_id: 'usr_1', event_type: 'webhook.test', client_id: 'p1' },
      ],
    });
  });

  it.each([
    ['no questions', { questions: [] }],
    [
      'too many',
      {
        questions: Array.from({ length: WEBHOOK_RECIPIENTS_MAX_QUESTIONS + 1 }, () => ({
          user_id: 'u',
          event_type: 'webhook.test',
        })),
      },
    ],
    ['not an array', { questions: 'usr_1' }],
    ['an unknown event type', { questions: [{ user_id: 'usr_1', event_type: 'user.deleted' }] }],
  ])('refuses %s', (_name, input) => {
    expect(() => AUTH_WEBHOOK_RECIPIENTS_BATCH.parseRequest(input)).toThrow(ContractViolation);
  });

  it('refuses an answer naming a partner it does not describe', () => {
    expect(() =>
      AUTH_WEBHOOK_RECIPIENTS_BATCH.parseResponse({ partners: [p1], answers: [{ client_ids: ['p2'] }] }),
    ).toThrow(/p2/);
  });

  it('gives each question its recipients, in the order asked', () => {
    const questions = [
      { user_id: 'usr_1', event_type: 'user.profile.updated' as const },
      { user_id: 'usr_2', event_type: 'user.profile.updated' as const },
    ];
    const response = AUTH_WEBHOOK_RECIPIENTS_BATCH.parseResponse({
      partners: [p1],
      answers: [{ client_ids: [] }, { client_ids: ['p1'] }],
    });
    expect(recipientsOfBatch(questions, response)).toEqual([[], [p1]]);
    expect(() => recipientsOfBatch(questions.slice(0, 1), response)).toThrow(/2 answers to 1 questions/);
  });
});
