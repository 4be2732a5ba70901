/**
 * The workflow code every worker runs: workflows/ with its tracing interceptors (workflows/tracing/: they continue
 * the caller's trace into the workflow and on to its activities, and add no command to a history). One definition
 * for the deploy-time bundle, the tests' bundle, the cluster check and a worker that bundles at start, so all of
 * them run the same code.
 */
import { bundleWorkflowCode, type Logger, type WorkflowBundle } from '@temporalio/worker';

const WORKFLOWS_PATH = require.resolve('../workflows');

const WORKFLOW_INTERCEPTOR_MODULES = [require.resolve('../workflows/tracing/interceptors')];

export async function bundleWorkflows(logger?: Logger): Promise<WorkflowBundle> {
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    ...(logger ? { logger } : {}),
  });
}
