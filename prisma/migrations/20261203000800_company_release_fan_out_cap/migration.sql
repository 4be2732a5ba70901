-- AlterTable
ALTER TABLE "TreeHold" ADD COLUMN     "fanningOutSince" TIMESTAMP(3),
ADD COLUMN     "waitingForCompanyCapSince" TIMESTAMP(3);
