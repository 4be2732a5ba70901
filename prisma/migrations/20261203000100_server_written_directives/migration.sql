-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "directive" JSONB,
ADD COLUMN     "reviewFingerprint" TEXT,
ADD COLUMN     "reviewWatchdogId" UUID;

-- AlterTable
ALTER TABLE "WakeRequest" ADD COLUMN     "directive" JSONB,
ADD COLUMN     "reviewFingerprint" TEXT,
ADD COLUMN     "reviewWatchdogId" UUID;

-- CreateIndex
CREATE INDEX "Run_reviewWatchdogId_idx" ON "Run"("reviewWatchdogId");

-- AddForeignKey
ALTER TABLE "Run" ADD CONSTRAINT "Run_reviewWatchdogId_fkey" FOREIGN KEY ("reviewWatchdogId") REFERENCES "Watchdog"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WakeRequest" ADD CONSTRAINT "WakeRequest_reviewWatchdogId_fkey" FOREIGN KEY ("reviewWatchdogId") REFERENCES "Watchdog"("id") ON DELETE SET NULL ON UPDATE CASCADE;


-- Issue 24: what the server acts on moves out of the caller-writable `context`. Only rows the server
-- itself wrote are carried over: a review wake is one whose idempotency key the watchdog derived from
-- its own id and fingerprint (API keys are prefixed `api:`), a resume wake is one a resume claim names,
-- a release wake one keyed `tree_release:`. Every other reserved key is dropped as the caller's.
UPDATE "WakeRequest" w
SET "directive" = jsonb_build_object('taskWatchdog', w."context"->'taskWatchdog'),
    "reviewWatchdogId" = (w."context"->'taskWatchdog'->>'watchdogId')::uuid,
    "reviewFingerprint" = w."context"->'taskWatchdog'->>'fingerprint'
WHERE w."context" ? 'taskWatchdog'
  AND w."idempotencyKey" = 'task_watchdog:' || (w."context"->'taskWatchdog'->>'watchdogId') || ':'
    || (w."context"->'taskWatchdog'->>'fingerprint')
  AND EXISTS (SELECT 1 FROM "Watchdog" d WHERE d.id::text = w."context"->'taskWatchdog'->>'watchdogId');

UPDATE "WakeRequest" w
SET "directive" = jsonb_strip_nulls(jsonb_build_object(
      'holdId', w."context"->'holdId', 'interruptedRunId', w."context"->'interruptedRunId',
      'checkpoint', w."context"->'checkpoint', 'reconciliation', w."context"->'reconciliation'))
WHERE EXISTS (SELECT 1 FROM "ResumeClaim" c WHERE c."wakeRequestId" = w.id)
   OR w."idempotencyKey" LIKE 'tree_release:%';

UPDATE "Run" r
SET "directive" = w."directive", "reviewWatchdogId" = w."reviewWatchdogId", "reviewFingerprint" = w."reviewFingerprint"
FROM "WakeRequest" w
WHERE w.id = r."wakeRequestId" AND w."directive" IS NOT NULL;

UPDATE "WakeRequest"
SET "context" = "context" - ARRAY['taskWatchdog', 'capsule', 'checkpoint', 'holdId', 'interruptedRunId', 'reconciliation']
WHERE "context" ?| ARRAY['taskWatchdog', 'capsule', 'checkpoint', 'holdId', 'interruptedRunId', 'reconciliation'];

UPDATE "Run"
SET "context" = "context" - ARRAY['taskWatchdog', 'capsule', 'checkpoint', 'holdId', 'interruptedRunId', 'reconciliation']
WHERE "context" ?| ARRAY['taskWatchdog', 'capsule', 'checkpoint', 'holdId', 'interruptedRunId', 'reconciliation'];
