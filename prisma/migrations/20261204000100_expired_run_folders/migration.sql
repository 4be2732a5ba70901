-- a run folder retention could not remove: its run was deleted by a pass on another host (retention/run-folders.ts)
CREATE TABLE "ExpiredRunFolder" (
    "runId" UUID NOT NULL,
    "hostId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ExpiredRunFolder_pkey" PRIMARY KEY ("runId")
);

CREATE INDEX "ExpiredRunFolder_hostId_idx" ON "ExpiredRunFolder"("hostId");
