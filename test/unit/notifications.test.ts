/**
 * @module Which recorded writes notify (only the three event families), their dedupe keys, the
 * signature format, and the addresses a webhook may not reach.
 */
import { createHmac } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import {
  isStandardWebhookSecret,
  notificationFor,
  notificationHash,
  signWebhook,
  verifyWebhook,
  webhookHeaders,
  type RecordedWrite,
} from '../../domain/notifications';
import { isPrivateAddress, webhookUrlProblem } from '../../domain/webhook-address';

const write = (
  action: string,
  details: Record<string, unknown> = {},
  entityType = 'issue',
  recordId = 'r1',
): RecordedWrite => ({ action, entityType, entityId: 'e1', details, recordId });

describe('notificationFor', () => {
  test.each([
    ['issue.comment_added', {}],
    ['issue.updated', { changes: { title: 'x' }, previousStatus: 'todo' }],
    ['issue.updated', { changes: { status: 'done' }, previousStatus: 'done' }],
    ['issue.updated', { changes: { status: 'blocked' }, previousStatus: 'todo' }],
    ['issue.created', { status: 'todo' }],
    ['run.finding', { verdict: 'silent-running' }],
    ['run.stop_requested', {}],
    ['issue.wake_requested', {}],
    ['issue.task_watchdog_fingerprint_reviewed', { watchdogId: 'w', stopFingerprint: 'f' }],
    ['execution_blocker.resolved', { blockerId: 'b' }],
  ])('%s %j is bookkeeping: no notification', (action, details) => {
    expect(notificationFor(write(action, details))).toBeNull();
  });

  test('the three families and their dedupe keys', () => {
    expect(
      notificationFor(write('issue.updated', { changes: { status: 'in_progress' }, previousStatus: 'todo' })),
    ).toMatchObject({
      event: 'phase_start',
      kind: 'issue_in_progress',
      subject: 'issue:e1',
      stateVersion: 'in_progress',
    });
    expect(notificationFor(write('issue.created', { status: 'in_progress' }))).toMatchObject({
      event: 'phase_start',
      subject: 'issue:e1',
      stateVersion: 'in_progress',
    });
    expect(notificationFor(write('issue.tree_hold_created', { holdId: 'h' }))).toMatchObject({
      event: 'phase_start',
      kind: 'tree_paused',
      subject: 'tree-hold:h',
      stateVersion: 'paused',
    });
    expect(notificationFor(write('issue.tree_hold_released', { holdId: 'h' }))).toMatchObject({
      event: 'phase_start',
      kind: 'tree_released',
      subject: 'tree-hold:h',
      stateVersion: 'released',
    });
    expect(notificationFor(write('execution_blocker.created', { blockerId: 'b', issueId: 'i' }, 'run'))).toMatchObject({
      event: 'new_blocker',
      subject: 'execution-blocker:b',
      issueId: 'i',
    });
    expect(
      notificationFor(write('issue.task_watchdog_triggered', { watchdogId: 'w', stopFingerprint: 'f1' })),
    ).toMatchObject({ event: 'new_blocker', kind: 'watchdog_stopped', subject: 'task-watchdog:w', stateVersion: 'f1' });
    expect(notificationFor(write('run.failed', { issueId: 'i' }, 'run'))).toMatchObject({
      event: 'terminal_result',
      kind: 'run_finished',
      subject: 'run:e1',
      stateVersion: 'terminal',
      data: { status: 'failed' },
    });
    expect(
      notificationFor(
        write('issue.updated', { changes: { status: 'cancelled' }, previousStatus: 'todo' }, 'issue', 'r9'),
      ),
    ).toMatchObject({ event: 'terminal_result', kind: 'issue_cancelled', stateVersion: 'r9' });
  });

  test('the same fact has the same key whenever it is recorded; a later in_progress entry is the same fact', () => {
    const first = notificationFor(
      write('issue.updated', { changes: { status: 'in_progress' }, previousStatus: 'todo' }, 'issue', 'r1'),
    )!;
    const again = notificationFor(
      write('issue.updated', { changes: { status: 'in_progress' }, previousStatus: 'blocked' }, 'issue', 'r7'),
    )!;
    expect([again.subject, again.stateVersion, notificationHash(again)]).toEqual([
      first.subject,
      first.stateVersion,
      notificationHash(first),
    ]);
    const stopA = notificationFor(write('issue.task_watchdog_triggered', { watchdogId: 'w', stopFingerprint: 'a' }))!;
    const stopB = notificationFor(write('issue.task_watchdog_triggered', { watchdogId: 'w', stopFingerprint: 'b' }))!;
    expect(stopA.stateVersion).not.toBe(stopB.stateVersion);
  });
});

describe('signatures', () => {
  test('v1 is the hex HMAC-SHA256 of "<timestamp>.<body>"; verification rejects tampering, other keys and old timestamps', () => {
    const body = '{"id":"n1"}';
    const signature = signWebhook('k', 1_700_000_000, body);
    expect(signature).toBe(`v1=${createHmac('sha256', 'k').update(`1700000000.${body}`).digest('hex')}`);
    expect(verifyWebhook('k', { timestamp: '1700000000', signature }, body, 1_700_000_100)).toBe(true);
    expect(verifyWebhook('k', { timestamp: '1700000000', signature }, '{"id":"n2"}', 1_700_000_100)).toBe(false);
    expect(verifyWebhook('other', { timestamp: '1700000000', signature }, body, 1_700_000_100)).toBe(false);
    expect(verifyWebhook('k', { timestamp: '1700000001', signature }, body, 1_700_000_100)).toBe(false);
    expect(verifyWebhook('k', { timestamp: '1700000000', signature }, body, 1_700_001_000)).toBe(false);
  });
});

describe('Standard Webhooks headers', () => {
  const secret = `whsec_${Buffer.from('a key of at least sixteen bytes').toString('base64')}`;

  test('sign "<id>.<timestamp>.<body>" with the base64-decoded key, as the specification says', () => {
    const body = '{"id":"n1"}';
    const headers = webhookHeaders(secret, 'delivery-1', 1_700_000_000, body);
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const mac = createHmac('sha256', key).update(`delivery-1.1700000000.${body}`).digest('base64');
    expect(headers).toMatchObject({
      'webhook-id': 'delivery-1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': `v1,${mac}`,
      'treewarden-delivery': 'delivery-1',
      'treewarden-signature': signWebhook(secret, 1_700_000_000, body),
    });
  });

  test("pass the standardwebhooks library's own verification, which refuses a tampered body", () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders(secret, 'delivery-2', now, '{"a":1}');
    expect(new Webhook(secret).verify('{"a":1}', headers)).toEqual({ a: 1 });
    expect(() => new Webhook(secret).verify('{"a":2}', headers)).toThrow(WebhookVerificationError);
  });

  test('a secret that is not a Standard Webhooks one gets the deprecated headers only', () => {
    expect(isStandardWebhookSecret(secret)).toBe(true);
    expect(isStandardWebhookSecret('receiver-secret-0123456789')).toBe(false);
    expect(isStandardWebhookSecret(`whsec_${Buffer.from('short').toString('base64')}`)).toBe(false);
    const headers = webhookHeaders('receiver-secret-0123456789', 'd', 1_700_000_000, '{}');
    expect(Object.keys(headers).sort()).toEqual([
      'treewarden-delivery',
      'treewarden-signature',
      'treewarden-timestamp',
    ]);
  });
});

describe('addresses and URLs', () => {
  test.each([
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '198.18.0.1',
  ])('%s is private', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });
  test.each(['8.8.8.8', '172.32.0.1', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8', '100.128.0.1'])(
    '%s is public',
    (ip) => {
      expect(isPrivateAddress(ip)).toBe(false);
    },
  );
  test('only absolute http(s) URLs without credentials', () => {
    expect(webhookUrlProblem('https://example.com/x')).toBeNull();
    expect(webhookUrlProblem('ftp://example.com')).toContain('http or https');
    expect(webhookUrlProblem('file:///etc/passwd')).toContain('http or https');
    expect(webhookUrlProblem('example.com/x')).toContain('absolute');
    expect(webhookUrlProblem('https://user:pw@example.com')).toContain('credentials');
  });
});
