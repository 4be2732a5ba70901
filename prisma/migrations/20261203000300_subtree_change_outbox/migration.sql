-- CreateTable
CREATE TABLE "SubtreeChange" (
    "id" BIGSERIAL NOT NULL,
    "issueIds" UUID[],
    "reason" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SubtreeChange_pkey" PRIMARY KEY ("id")
);

