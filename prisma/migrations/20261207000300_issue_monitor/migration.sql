-- CreateTable
CREATE TABLE "IssueMonitor" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "issueId" UUID NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "note" TEXT,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "version" INTEGER NOT NULL DEFAULT 1,
    "wakeRequestId" UUID,
    "endedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "IssueMonitor_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "IssueMonitor_issueId_key" ON "IssueMonitor"("issueId");

-- CreateIndex
CREATE INDEX "IssueMonitor_status_at_idx" ON "IssueMonitor"("status", "at");

-- AddForeignKey
ALTER TABLE "IssueMonitor" ADD CONSTRAINT "IssueMonitor_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "IssueMonitor" ADD CONSTRAINT "IssueMonitor_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;
