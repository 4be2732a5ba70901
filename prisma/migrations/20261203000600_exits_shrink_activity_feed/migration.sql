-- DropIndex
DROP INDEX "ActivityLog_entityId_idx";

-- AlterTable
ALTER TABLE "Issue" ADD COLUMN     "blockedReason" TEXT;

-- AlterTable
ALTER TABLE "Watchdog" ADD COLUMN     "pendingReviewLeafDigests" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "reviewedLeafDigests" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- CreateIndex
CREATE INDEX "ActivityLog_entityId_createdAt_id_idx" ON "ActivityLog"("entityId", "createdAt", "id");

