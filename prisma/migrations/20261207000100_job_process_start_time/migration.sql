-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "processStartTime" TEXT;
