-- CreateEnum
CREATE TYPE "AgentStatus" AS ENUM ('active', 'paused', 'terminated', 'pending_approval');

-- CreateEnum
CREATE TYPE "IssueStatus" AS ENUM ('backlog', 'todo', 'in_progress', 'in_review', 'blocked', 'done', 'cancelled');

-- CreateEnum
CREATE TYPE "RunStatus" AS ENUM ('queued', 'running', 'scheduled_retry', 'succeeded', 'failed', 'cancelled', 'timed_out');

-- CreateEnum
CREATE TYPE "WakeStatus" AS ENUM ('queued', 'claimed', 'cancelled', 'skipped');

-- CreateEnum
CREATE TYPE "ApiTokenKind" AS ENUM ('admin', 'board', 'run');

-- CreateEnum
CREATE TYPE "WatchdogStatus" AS ENUM ('active', 'disabled');

-- CreateEnum
CREATE TYPE "InteractionStatus" AS ENUM ('pending', 'resolved', 'cancelled');

-- CreateEnum
CREATE TYPE "InteractionAudience" AS ENUM ('anyone', 'human_only', 'not_creator');

-- CreateEnum
CREATE TYPE "TreeHoldStatus" AS ENUM ('active', 'released');

-- CreateEnum
CREATE TYPE "BlockerStatus" AS ENUM ('active', 'resolved');

-- CreateTable
CREATE TABLE "Company" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Company_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Agent" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "status" "AgentStatus" NOT NULL DEFAULT 'active',
    "adapter" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Agent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Issue" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "parentId" UUID,
    "title" TEXT NOT NULL,
    "status" "IssueStatus" NOT NULL DEFAULT 'todo',
    "assigneeAgentId" UUID,
    "originKind" TEXT NOT NULL DEFAULT 'manual',
    "originId" UUID,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Issue_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "IssueBlocker" (
    "issueId" UUID NOT NULL,
    "blockerIssueId" UUID NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "IssueBlocker_pkey" PRIMARY KEY ("issueId","blockerIssueId")
);

-- CreateTable
CREATE TABLE "Comment" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "issueId" UUID NOT NULL,
    "body" TEXT NOT NULL,
    "authorKind" TEXT NOT NULL,
    "authorAgentId" UUID,
    "runId" UUID,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Comment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Run" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "issueId" UUID NOT NULL,
    "agentId" UUID NOT NULL,
    "wakeRequestId" UUID,
    "status" "RunStatus" NOT NULL DEFAULT 'queued',
    "wakeReason" TEXT NOT NULL,
    "context" JSONB NOT NULL DEFAULT '{}',
    "adapterEntered" BOOLEAN NOT NULL DEFAULT false,
    "exitCode" INTEGER,
    "error" TEXT,
    "stopKind" TEXT,
    "stoppedByHoldId" UUID,
    "stopRequestedAt" TIMESTAMP(3),
    "stopDetails" JSONB,
    "startedAt" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Run_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WakeRequest" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "agentId" UUID NOT NULL,
    "issueId" UUID NOT NULL,
    "reason" TEXT NOT NULL,
    "context" JSONB NOT NULL DEFAULT '{}',
    "status" "WakeStatus" NOT NULL DEFAULT 'queued',
    "idempotencyKey" TEXT,
    "skipReason" TEXT,
    "runId" UUID,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimedAt" TIMESTAMP(3),

    CONSTRAINT "WakeRequest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ActivityLog" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "actorKind" TEXT NOT NULL,
    "actorId" TEXT,
    "runId" UUID,
    "action" TEXT NOT NULL,
    "entityType" TEXT NOT NULL,
    "entityId" TEXT NOT NULL,
    "details" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ActivityLog_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiToken" (
    "id" UUID NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "kind" "ApiTokenKind" NOT NULL,
    "companyId" UUID,
    "agentId" UUID,
    "runId" UUID,
    "revokedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ApiToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Watchdog" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "issueId" UUID NOT NULL,
    "activeIssueId" UUID,
    "agentId" UUID NOT NULL,
    "instructions" TEXT,
    "status" "WatchdogStatus" NOT NULL DEFAULT 'active',
    "revision" INTEGER NOT NULL DEFAULT 1,
    "reviewIssueId" UUID,
    "lastObservedFingerprint" TEXT,
    "lastReviewedFingerprint" TEXT,
    "pendingReviewFingerprint" TEXT,
    "lastEvaluation" JSONB,
    "incompleteIssueIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "triggerCount" INTEGER NOT NULL DEFAULT 0,
    "lastTriggeredAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Watchdog_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Interaction" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "issueId" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "status" "InteractionStatus" NOT NULL DEFAULT 'pending',
    "audience" "InteractionAudience" NOT NULL DEFAULT 'anyone',
    "addresseeAgentId" UUID,
    "createdByKind" TEXT NOT NULL,
    "createdByAgentId" UUID,
    "resolvedByKind" TEXT,
    "resolvedByAgentId" UUID,
    "resolution" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolvedAt" TIMESTAMP(3),

    CONSTRAINT "Interaction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TreeHold" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "rootIssueId" UUID NOT NULL,
    "mode" TEXT NOT NULL DEFAULT 'pause',
    "status" "TreeHoldStatus" NOT NULL DEFAULT 'active',
    "reason" TEXT,
    "appliedAt" TIMESTAMP(3),
    "releasedAt" TIMESTAMP(3),
    "releaseResult" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TreeHold_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TreeHoldMember" (
    "id" UUID NOT NULL,
    "holdId" UUID NOT NULL,
    "issueId" UUID NOT NULL,
    "depth" INTEGER NOT NULL,
    "issueStatus" "IssueStatus" NOT NULL,
    "assigneeAgentId" UUID,
    "activeRunId" UUID,
    "activeRunStatus" TEXT,
    "interruptedRunId" UUID,

    CONSTRAINT "TreeHoldMember_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ResumeClaim" (
    "interruptedRunId" UUID NOT NULL,
    "holdId" UUID NOT NULL,
    "wakeRequestId" UUID NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ResumeClaim_pkey" PRIMARY KEY ("interruptedRunId")
);

-- CreateTable
CREATE TABLE "ExecutionBlocker" (
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "issueId" UUID NOT NULL,
    "runId" UUID,
    "cause" TEXT NOT NULL,
    "nextAction" TEXT NOT NULL,
    "status" "BlockerStatus" NOT NULL DEFAULT 'active',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolvedAt" TIMESTAMP(3),

    CONSTRAINT "ExecutionBlocker_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Agent_companyId_idx" ON "Agent"("companyId");

-- CreateIndex
CREATE INDEX "Issue_companyId_idx" ON "Issue"("companyId");

-- CreateIndex
CREATE INDEX "Issue_parentId_idx" ON "Issue"("parentId");

-- CreateIndex
CREATE INDEX "IssueBlocker_blockerIssueId_idx" ON "IssueBlocker"("blockerIssueId");

-- CreateIndex
CREATE INDEX "Comment_issueId_idx" ON "Comment"("issueId");

-- CreateIndex
CREATE UNIQUE INDEX "Run_wakeRequestId_key" ON "Run"("wakeRequestId");

-- CreateIndex
CREATE INDEX "Run_issueId_createdAt_idx" ON "Run"("issueId", "createdAt");

-- CreateIndex
CREATE INDEX "Run_status_idx" ON "Run"("status");

-- CreateIndex
CREATE UNIQUE INDEX "WakeRequest_idempotencyKey_key" ON "WakeRequest"("idempotencyKey");

-- CreateIndex
CREATE INDEX "WakeRequest_issueId_status_idx" ON "WakeRequest"("issueId", "status");

-- CreateIndex
CREATE INDEX "WakeRequest_status_idx" ON "WakeRequest"("status");

-- CreateIndex
CREATE INDEX "ActivityLog_companyId_action_idx" ON "ActivityLog"("companyId", "action");

-- CreateIndex
CREATE INDEX "ActivityLog_entityId_idx" ON "ActivityLog"("entityId");

-- CreateIndex
CREATE UNIQUE INDEX "ApiToken_tokenHash_key" ON "ApiToken"("tokenHash");

-- CreateIndex
CREATE UNIQUE INDEX "ApiToken_runId_key" ON "ApiToken"("runId");

-- CreateIndex
CREATE UNIQUE INDEX "Watchdog_activeIssueId_key" ON "Watchdog"("activeIssueId");

-- CreateIndex
CREATE UNIQUE INDEX "Watchdog_reviewIssueId_key" ON "Watchdog"("reviewIssueId");

-- CreateIndex
CREATE INDEX "Watchdog_companyId_status_idx" ON "Watchdog"("companyId", "status");

-- CreateIndex
CREATE INDEX "Watchdog_issueId_idx" ON "Watchdog"("issueId");

-- CreateIndex
CREATE INDEX "Interaction_issueId_status_idx" ON "Interaction"("issueId", "status");

-- CreateIndex
CREATE INDEX "TreeHold_companyId_status_idx" ON "TreeHold"("companyId", "status");

-- CreateIndex
CREATE INDEX "TreeHold_rootIssueId_status_idx" ON "TreeHold"("rootIssueId", "status");

-- CreateIndex
CREATE INDEX "TreeHoldMember_interruptedRunId_idx" ON "TreeHoldMember"("interruptedRunId");

-- CreateIndex
CREATE UNIQUE INDEX "TreeHoldMember_holdId_issueId_key" ON "TreeHoldMember"("holdId", "issueId");

-- CreateIndex
CREATE UNIQUE INDEX "ResumeClaim_wakeRequestId_key" ON "ResumeClaim"("wakeRequestId");

-- CreateIndex
CREATE INDEX "ExecutionBlocker_issueId_status_idx" ON "ExecutionBlocker"("issueId", "status");

-- AddForeignKey
ALTER TABLE "Agent" ADD CONSTRAINT "Agent_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Issue" ADD CONSTRAINT "Issue_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Issue" ADD CONSTRAINT "Issue_parentId_fkey" FOREIGN KEY ("parentId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Issue" ADD CONSTRAINT "Issue_assigneeAgentId_fkey" FOREIGN KEY ("assigneeAgentId") REFERENCES "Agent"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "IssueBlocker" ADD CONSTRAINT "IssueBlocker_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "IssueBlocker" ADD CONSTRAINT "IssueBlocker_blockerIssueId_fkey" FOREIGN KEY ("blockerIssueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Comment" ADD CONSTRAINT "Comment_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Run" ADD CONSTRAINT "Run_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Run" ADD CONSTRAINT "Run_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Run" ADD CONSTRAINT "Run_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WakeRequest" ADD CONSTRAINT "WakeRequest_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WakeRequest" ADD CONSTRAINT "WakeRequest_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WakeRequest" ADD CONSTRAINT "WakeRequest_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ActivityLog" ADD CONSTRAINT "ActivityLog_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiToken" ADD CONSTRAINT "ApiToken_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Watchdog" ADD CONSTRAINT "Watchdog_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Watchdog" ADD CONSTRAINT "Watchdog_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Watchdog" ADD CONSTRAINT "Watchdog_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Watchdog" ADD CONSTRAINT "Watchdog_reviewIssueId_fkey" FOREIGN KEY ("reviewIssueId") REFERENCES "Issue"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Interaction" ADD CONSTRAINT "Interaction_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Interaction" ADD CONSTRAINT "Interaction_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TreeHold" ADD CONSTRAINT "TreeHold_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TreeHold" ADD CONSTRAINT "TreeHold_rootIssueId_fkey" FOREIGN KEY ("rootIssueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TreeHoldMember" ADD CONSTRAINT "TreeHoldMember_holdId_fkey" FOREIGN KEY ("holdId") REFERENCES "TreeHold"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TreeHoldMember" ADD CONSTRAINT "TreeHoldMember_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ResumeClaim" ADD CONSTRAINT "ResumeClaim_interruptedRunId_fkey" FOREIGN KEY ("interruptedRunId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ExecutionBlocker" ADD CONSTRAINT "ExecutionBlocker_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;
