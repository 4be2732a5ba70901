-- CreateIndex
CREATE INDEX "ActivityLog_createdAt_idx" ON "ActivityLog"("createdAt");

-- CreateIndex
CREATE INDEX "IdempotencyRecord_createdAt_idx" ON "IdempotencyRecord"("createdAt");

-- CreateIndex
CREATE INDEX "Run_finishedAt_idx" ON "Run"("finishedAt");

-- CreateIndex
CREATE INDEX "WakeRequest_createdAt_idx" ON "WakeRequest"("createdAt");

