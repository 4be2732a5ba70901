/** @module An update the server rejected as unread is sent again under a new id; any other outcome is the caller's. */
import { ApplicationFailure, WorkflowUpdateFailedError } from '@temporalio/client';
import { isHoldNotActive, holdNotActive } from '../../domain/hold-contract';
import { isUnprocessedUpdate, sendUntilProcessed } from '../../temporal/unprocessed-update';

const unread = () =>
  new WorkflowUpdateFailedError(
    'Workflow Update failed',
    ApplicationFailure.create({
      type: 'UnprocessedUpdate',
      message: "Workflow Update is rejected because it wasn't processed by worker.",
    }),
  );

test('an unread update is sent again, under a new update id each time, until the workflow answers', async () => {
  const sent: string[] = [];
  const answer = await sendUntilProcessed('release-1', async (updateId) => {
    sent.push(updateId);
    if (sent.length < 3) throw unread();
    return 'released';
  });
  expect(answer).toBe('released');
  expect(sent).toEqual(['release-1', 'release-1-resent-2', 'release-1-resent-3']);
});

test("the workflow's refusal is passed on at once, not sent again", async () => {
  const refusal = new WorkflowUpdateFailedError('Workflow Update failed', holdNotActive('h1'));
  let sends = 0;
  const sending = sendUntilProcessed('release-2', async () => {
    sends++;
    throw refusal;
  });
  await expect(sending).rejects.toBe(refusal);
  expect(sends).toBe(1);
  expect(isHoldNotActive(refusal.cause)).toBe(true);
});

test('an update the server keeps leaving unread is given up after five sends', async () => {
  let sends = 0;
  const sending = sendUntilProcessed('release-3', async () => {
    sends++;
    throw unread();
  });
  expect(isUnprocessedUpdate(await sending.catch((error: unknown) => error))).toBe(true);
  expect(sends).toBe(5);
});

test('only the UnprocessedUpdate type counts as unread', () => {
  expect(isUnprocessedUpdate(unread())).toBe(true);
  expect(isUnprocessedUpdate(new WorkflowUpdateFailedError('x', ApplicationFailure.create({ type: 'Other' })))).toBe(
    false,
  );
  expect(isUnprocessedUpdate(new Error('UnprocessedUpdate'))).toBe(false);
});
