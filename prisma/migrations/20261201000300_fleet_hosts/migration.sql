-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "hostId" TEXT;

-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "hostId" TEXT;

-- CreateTable
CREATE TABLE "LostHost" (
    "hostId" TEXT NOT NULL,
    "declaredAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "declaredBy" TEXT NOT NULL,
    "settledRuns" INTEGER NOT NULL DEFAULT 0,
    "settledJobs" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "LostHost_pkey" PRIMARY KEY ("hostId")
);

-- CreateIndex
CREATE INDEX "Run_hostId_idx" ON "Run"("hostId");

-- CreateIndex
CREATE INDEX "Job_hostId_idx" ON "Job"("hostId");
