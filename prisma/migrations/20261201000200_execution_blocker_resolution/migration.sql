-- AlterTable
ALTER TABLE "ExecutionBlocker" ADD COLUMN     "note" TEXT,
ADD COLUMN     "resolution" TEXT,
ADD COLUMN     "resolvedBy" TEXT;

-- CreateIndex
CREATE INDEX "ExecutionBlocker_runId_idx" ON "ExecutionBlocker"("runId");
