-- CreateTable
CREATE TABLE "ReapClaim" (
    "workId" UUID NOT NULL,
    "hostId" TEXT NOT NULL,
    "claimedBy" TEXT NOT NULL,
    "claimedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ReapClaim_pkey" PRIMARY KEY ("workId")
);
