/**
 * What re-dispatching a hold's interrupted work did (a release, a retry, a resolved blocker). Declared once, as the
 * schema the API checks its answers against; the type is inferred from it. Workflows import the type only, so zod
 * stays out of their bundle.
 */
import { z } from 'zod';

const id = z.string().meta({ format: 'uuid' });

export const resumeReportSchema = z.object({
  resumed: z.array(z.object({ issueId: id, runId: id })),
  skipped: z.array(z.object({ issueId: id, reason: z.string() })),
  wakeFailures: z.array(z.object({ issueId: id, message: z.string() })),
});

export type ResumeReport = z.infer<typeof resumeReportSchema>;
