-- AlterEnum
ALTER TYPE "WatchdogMode" ADD VALUE 'self';

-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "selfReview" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "WakeRequest" ADD COLUMN     "selfReview" BOOLEAN NOT NULL DEFAULT false;
