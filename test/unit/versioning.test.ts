import { MOVING_WORKFLOW_TYPES, VERSIONING_BEHAVIORS, versioningBehaviorFor } from '../../domain/versioning';

test('every workflow type the worker serves has chosen its versioning behaviour', async () => {
  const served = Object.keys(await import('../../workflows'));
  expect(Object.keys(VERSIONING_BEHAVIORS).sort()).toEqual(served.sort());
});

test('each workflow function reads its behaviour when an execution starts on a worker', async () => {
  const workflows = (await import('../../workflows')) as Record<string, { workflowDefinitionOptions?: unknown }>;
  for (const type of Object.keys(VERSIONING_BEHAVIORS))
    expect(typeof workflows[type].workflowDefinitionOptions).toBe('function');
});

test("a versioned worker declares the type's behaviour; an unversioned one (the server refuses it there) none", () => {
  expect(versioningBehaviorFor('agentRunWorkflow', 'treewarden')).toBe('PINNED');
  expect(versioningBehaviorFor('taskWatchdogWorkflow', 'treewarden')).toBe('AUTO_UPGRADE');
  expect(versioningBehaviorFor('treeHoldWorkflow', '')).toBeUndefined();
  expect(versioningBehaviorFor('treeHoldWorkflow', undefined)).toBeUndefined();
});

test('only the long-lived entities move to a new build; the work that ends by itself stays on its own', () => {
  expect(MOVING_WORKFLOW_TYPES.sort()).toEqual([
    'issueMonitorWorkflow',
    'livenessWatchWorkflow',
    'taskWatchdogWorkflow',
    'treeHoldWorkflow',
  ]);
});
