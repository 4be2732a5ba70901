import { combinedState } from '../../domain/worker-state';

describe('one state for a worker process of three pollers', () => {
  test('running only while every poller runs', () => {
    expect(combinedState(['RUNNING', 'RUNNING', 'RUNNING'])).toBe('RUNNING');
    expect(combinedState(['RUNNING', 'STOPPED', 'RUNNING'])).toBe('STOPPING');
  });

  test("an idle poller that stopped does not hide the agents' poller still draining a run", () => {
    expect(combinedState(['STOPPED', 'DRAINING', 'STOPPED'])).toBe('DRAINING');
    expect(combinedState(['STOPPED', 'DRAINED', 'STOPPED'])).toBe('DRAINED');
  });

  test('stopped when all have stopped; failed when any failed', () => {
    expect(combinedState(['STOPPED', 'STOPPED', 'STOPPED'])).toBe('STOPPED');
    expect(combinedState(['RUNNING', 'FAILED', 'DRAINING'])).toBe('FAILED');
  });
});
