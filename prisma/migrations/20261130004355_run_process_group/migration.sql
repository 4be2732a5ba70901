-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "processGroupId" INTEGER;

