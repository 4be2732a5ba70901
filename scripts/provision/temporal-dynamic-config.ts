/**
 * The dynamic config every Temporal server treewarden starts runs with, the dev server's and the cluster's alike.
 * `matching.enableFairness`: the task queues dispatch by the priority and fairness keys treewarden sets (the company
 * id; docs/fleet.md, "Fairness between companies"); without it the keys are recorded but the queue stays first in,
 * first out.
 * `system.enableActivityEagerExecution`: an activity scheduled on the workflow's own queue returns with the workflow
 * task's answer when the worker has a slot (the SDK asks by default), a match the server no longer makes.
 */
export const TREEWARDEN_DYNAMIC_CONFIG: Readonly<Record<string, boolean>> = {
  'matching.enableFairness': true,
  'system.enableActivityEagerExecution': true,
};

/** The same values as a server's dynamic config file (`dynamicConfigClient.filepath`). */
export function dynamicConfigYaml(values: Readonly<Record<string, string | number | boolean>>): string {
  const entries = Object.entries(values).map(([key, value]) => `${key}:\n  - value: ${JSON.stringify(value)}\n`);
  return `# written by scripts/provision/temporal-dynamic-config.ts\n${entries.join('')}`;
}
