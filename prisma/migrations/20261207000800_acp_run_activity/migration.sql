-- An acp run's activity as its supervisor reports it (issue 46): the last tool calls, message and permission
-- decisions (bounded JSON, shown on the run), the agent's reported usage (the postmortem's figures), and the moment
-- its supervisor took its last messages, after which a comment is no longer a message to it.
ALTER TABLE "Run" ADD COLUMN     "acpActivity" JSONB,
ADD COLUMN     "usageTokens" INTEGER,
ADD COLUMN     "usageCost" DOUBLE PRECISION,
ADD COLUMN     "usageCurrency" TEXT,
ADD COLUMN     "acpMessagesClosedAt" TIMESTAMP(3);
