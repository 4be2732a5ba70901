-- AlterTable
ALTER TABLE "Watchdog" ADD COLUMN     "acceptedUntil" TIMESTAMP(3),
ADD COLUMN     "escalatedFingerprint" TEXT,
ADD COLUMN     "pendingRecheckAfter" TIMESTAMP(3),
ADD COLUMN     "recheckCount" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "repeatLimit" INTEGER NOT NULL DEFAULT 3;
