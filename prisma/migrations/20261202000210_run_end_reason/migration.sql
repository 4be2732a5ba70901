-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "endReason" TEXT;
