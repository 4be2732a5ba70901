import { whenPoolAnswers } from '../../db/prisma';

const acquireTimeout = () => new Error('timeout exceeded when trying to connect');

test('a statement the pool could not start in time runs again, and its result is returned', async () => {
  let calls = 0;
  const result = await whenPoolAnswers(async () => {
    calls++;
    if (calls < 3) throw acquireTimeout();
    return 'ran';
  });
  expect(result).toBe('ran');
  expect(calls).toBe(3);
});

test('any other failure is thrown at once: the statement may have reached the database', async () => {
  let calls = 0;
  await expect(
    whenPoolAnswers(async () => {
      calls++;
      throw new Error('duplicate key value violates unique constraint');
    }),
  ).rejects.toThrow('duplicate key');
  expect(calls).toBe(1);
});
