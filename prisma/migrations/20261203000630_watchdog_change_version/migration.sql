-- the change dispatcher bumps a watchdog's version per round; a safety tick compares it with the evaluated one (issue 26)
ALTER TABLE "Watchdog" ADD COLUMN "changeVersion" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "evaluatedChangeVersion" INTEGER NOT NULL DEFAULT 0;
