-- CreateEnum
CREATE TYPE "WatchdogMode" AS ENUM ('review', 'observe');

-- AlterTable
ALTER TABLE "Watchdog" ADD COLUMN     "mode" "WatchdogMode" NOT NULL DEFAULT 'review';

