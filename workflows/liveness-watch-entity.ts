/**
 * What the liveness watch knows: when its next pass is owed (`dueAtMs`), or null when nothing idle is waiting.
 * Signals only move it earlier; the workflow's main loop waits for it and runs the pass. A pass clears it when it
 * starts and sets it from what it found, so a change announced while a pass ran still brings a pass after it.
 */
export class LivenessWatchEntity {
  constructor(
    public dueAtMs: number | null,
    private readonly stallMs: number,
  ) {}

  /** A change at `nowMs` may have ended an issue's last live path: that issue is stalled at `nowMs + stallMs`. */
  pathsMayHaveEnded(nowMs: number): void {
    this.owedBy(nowMs + this.stallMs);
  }

  /** A pass starts: it answers for everything announced before it. */
  passing(): void {
    this.dueAtMs = null;
  }

  /** A pass ended at `nowMs` and owes the next one in `nextPassInMs` (null: none). */
  passed(nowMs: number, nextPassInMs: number | null): void {
    if (nextPassInMs !== null) this.owedBy(nowMs + nextPassInMs);
  }

  private owedBy(atMs: number): void {
    this.dueAtMs = this.dueAtMs === null ? atMs : Math.min(this.dueAtMs, atMs);
  }
}
