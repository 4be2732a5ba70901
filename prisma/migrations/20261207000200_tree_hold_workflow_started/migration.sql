-- A hold's workflow start is owed until recorded (holds/start-dispatcher.ts). Holds already here have theirs.
ALTER TABLE "TreeHold" ADD COLUMN "workflowStartedAt" TIMESTAMP(3);
UPDATE "TreeHold" SET "workflowStartedAt" = "createdAt";
