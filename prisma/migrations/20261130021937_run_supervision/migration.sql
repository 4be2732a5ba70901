-- CreateEnum
CREATE TYPE "JobKind" AS ENUM ('shell_job', 'monitor');

-- CreateEnum
CREATE TYPE "JobStatus" AS ENUM ('running', 'stopped', 'exited');

-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "failureState" TEXT,
ADD COLUMN     "host" TEXT,
ADD COLUMN     "inspection" JSONB,
ADD COLUMN     "lastApiActivityAt" TIMESTAMP(3),
ADD COLUMN     "leaseRenewedAt" TIMESTAMP(3),
ADD COLUMN     "ownerToken" TEXT,
ADD COLUMN     "silentDecision" TEXT,
ADD COLUMN     "silentDecisionUntil" TIMESTAMP(3),
ADD COLUMN     "silentState" TEXT,
ADD COLUMN     "stateVersion" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "stopResult" JSONB,
ADD COLUMN     "supersededByRunId" UUID,
ADD COLUMN     "supersessionEvidenceId" UUID,
ADD COLUMN     "workdir" TEXT;

-- CreateTable
CREATE TABLE "Job" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "ownerRunId" UUID NOT NULL,
    "kind" "JobKind" NOT NULL,
    "command" TEXT NOT NULL,
    "args" JSONB NOT NULL DEFAULT '[]',
    "status" "JobStatus" NOT NULL DEFAULT 'running',
    "ownerToken" TEXT NOT NULL,
    "host" TEXT,
    "processGroupId" INTEGER,
    "exitCode" INTEGER,
    "stopReason" TEXT,
    "stopResult" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "Job_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "GateEvidence" (
    "id" UUID NOT NULL,
    "runId" UUID NOT NULL,
    "check" TEXT NOT NULL,
    "passed" BOOLEAN NOT NULL,
    "details" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "GateEvidence_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Finding" (
    "id" UUID NOT NULL,
    "runId" UUID NOT NULL,
    "stateVersion" INTEGER NOT NULL,
    "findingHash" TEXT NOT NULL,
    "verdict" TEXT NOT NULL,
    "details" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Finding_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Job_ownerToken_key" ON "Job"("ownerToken");

-- CreateIndex
CREATE INDEX "Job_ownerRunId_idx" ON "Job"("ownerRunId");

-- CreateIndex
CREATE INDEX "GateEvidence_runId_idx" ON "GateEvidence"("runId");

-- CreateIndex
CREATE UNIQUE INDEX "Finding_runId_stateVersion_findingHash_key" ON "Finding"("runId", "stateVersion", "findingHash");

-- CreateIndex
CREATE UNIQUE INDEX "Run_ownerToken_key" ON "Run"("ownerToken");

-- AddForeignKey
ALTER TABLE "Job" ADD CONSTRAINT "Job_ownerRunId_fkey" FOREIGN KEY ("ownerRunId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GateEvidence" ADD CONSTRAINT "GateEvidence_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Finding" ADD CONSTRAINT "Finding_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

