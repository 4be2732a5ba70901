-- AlterTable
ALTER TABLE "Comment" ADD COLUMN     "deliveredAt" TIMESTAMP(3),
ADD COLUMN     "deliveredToRunId" UUID,
ADD COLUMN     "messageForRunId" UUID;
