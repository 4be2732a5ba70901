-- CreateTable
CREATE TABLE "LivenessRecovery" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "issueId" UUID NOT NULL,
    "stallKey" TEXT NOT NULL,
    "latestRunId" UUID,
    "stalledForMs" INTEGER NOT NULL,
    "wakeRequestId" UUID,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "LivenessRecovery_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Issue_status_idx" ON "Issue"("status");

-- CreateIndex
CREATE INDEX "LivenessRecovery_companyId_createdAt_idx" ON "LivenessRecovery"("companyId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "LivenessRecovery_issueId_stallKey_key" ON "LivenessRecovery"("issueId", "stallKey");

-- AddForeignKey
ALTER TABLE "LivenessRecovery" ADD CONSTRAINT "LivenessRecovery_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "LivenessRecovery" ADD CONSTRAINT "LivenessRecovery_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;
