-- one worker per period does the fleet-wide recovery, however many start in it (issue 25)
CREATE TABLE "FleetChoreClaim" (
    "chore" TEXT NOT NULL,
    "claimedBy" TEXT NOT NULL,
    "claimedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "FleetChoreClaim_pkey" PRIMARY KEY ("chore")
);
