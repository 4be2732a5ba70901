-- an adopting worker compares the recorded start time with /proc before it trusts a pid (issue 25)
ALTER TABLE "Run" ADD COLUMN "processStartTime" TEXT;
