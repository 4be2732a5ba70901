-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "cgroupPath" TEXT;

-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "cgroupPath" TEXT;

