-- console sign-in sessions are board tokens with a purpose and an expiry
ALTER TABLE "ApiToken" ADD COLUMN "purpose" TEXT;
ALTER TABLE "ApiToken" ADD COLUMN "expiresAt" TIMESTAMP(3);
