import { MOVING_WORKFLOW_TYPES, VERSIONING_BEHAVIORS } from '../../domain/versioning';

test('every workflow type the worker serves has chosen its versioning behaviour', async () => {
  const served = Object.keys(await import('../../workflows'));
  expect(Object.keys(VERSIONING_BEHAVIORS).sort()).toEqual(served.sort());
});

test('the bundle applies each declared behaviour to its workflow function', async () => {
  const workflows = (await import('../../workflows')) as Record<string, { workflowDefinitionOptions?: unknown }>;
  for (const [type, versioningBehavior] of Object.entries(VERSIONING_BEHAVIORS)) {
    expect([type, workflows[type].workflowDefinitionOptions]).toEqual([type, { versioningBehavior }]);
  }
});

test('only the long-lived entities move to a new build; the work that ends by itself stays on its own', () => {
  expect(MOVING_WORKFLOW_TYPES.sort()).toEqual(['taskWatchdogWorkflow', 'treeHoldWorkflow']);
});
