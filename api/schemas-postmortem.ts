/** Response shape of an issue's postmortem figures. */
import { z } from 'zod';
import { named, timestamp, uuid } from './schemas';

const figure = z.object({
  value: z.number().nullable(),
  unit: z.enum(['seconds', 'count', 'tokens']),
  counts: z.string().meta({ description: 'what the figure counts' }),
});
export const Postmortem = named(
  'Postmortem',
  z.object({
    issueId: uuid,
    window: z.object({ from: timestamp.nullable(), to: timestamp, description: z.string() }),
    productiveTime: figure,
    watchdogRecoveryTime: z.object({
      p50: figure,
      max: figure,
      recovered: z.number(),
      stillStopped: z.number(),
      counts: z.string(),
    }),
    falseStaleCount: figure,
    orphanMonitorCount: figure,
    contextOverflows: figure,
    detachedProcessCount: figure,
    agentUsage: z.object({
      tokens: figure,
      cost: z.object({ amounts: z.array(z.object({ currency: z.string(), amount: z.number() })), counts: z.string() }),
      reportingRuns: z.number().meta({ description: 'runs whose agent reported usage' }),
    }),
  }),
);
