/**
 * Counts what the activities did, from outside them: latency of every activity, and the domain
 * events (evaluations, wakes, resumes, stop verdicts) read off the results they return.
 */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Activities } from '../activities';
import type { Metrics } from './metrics';

type Result<K extends keyof Activities> = Awaited<ReturnType<Activities[K]>>;

export function metricsInterceptor(metrics: Metrics): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const activity = ctx.info.activityType;
        const stopTimer = metrics.activityDuration.startTimer({ activity });
        try {
          const result = await next(input);
          stopTimer({ outcome: 'completed' });
          record(metrics, activity, result);
          return result;
        } catch (error) {
          stopTimer({ outcome: 'failed' });
          throw error;
        }
      },
    },
  });
}

function record(metrics: Metrics, activity: string, result: unknown): void {
  if (activity === 'evaluateWatchdog') {
    const evaluation = result as Result<'evaluateWatchdog'>;
    metrics.evaluations.inc({ state: evaluation.state });
    if (evaluation.woke) metrics.wakes.inc();
  } else if (activity === 'releaseHold') {
    metrics.resumes.inc((result as Result<'releaseHold'>).resumed.length);
  } else if (activity === 'stopProcessGroup') {
    const stop = result as Result<'stopProcessGroup'>;
    metrics.stopVerdicts.inc({ verdict: stop.attempts.length > 1 ? `${stop.verdict}_after_sigkill` : stop.verdict });
  }
}
