-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "acpSessionId" TEXT,
ADD COLUMN     "acpSessionOrigin" TEXT;

-- CreateTable
CREATE TABLE "AcpSession" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "agentId" UUID NOT NULL,
    "sessionId" TEXT NOT NULL,
    "cwd" TEXT NOT NULL,
    "command" JSONB NOT NULL,
    "host" TEXT NOT NULL,
    "runId" UUID NOT NULL,
    "claims" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AcpSession_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "AcpSession_agentId_sessionId_key" ON "AcpSession"("agentId", "sessionId");

-- AddForeignKey
ALTER TABLE "AcpSession" ADD CONSTRAINT "AcpSession_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;
