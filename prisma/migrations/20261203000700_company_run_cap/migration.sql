-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "companyCapQueuedAt" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "Run_companyId_status_idx" ON "Run"("companyId", "status");

