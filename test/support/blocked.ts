/** A move into `blocked` with its exit: every blocked issue names what unblocks it (issue 29, item 4). */
export const BLOCKED = { status: 'blocked', blockedReason: 'waiting for the operator' } as const;

/** The status fields that move an issue to `status`, with the exit `blocked` needs. */
export const moveTo = (status: string) => (status === 'blocked' ? BLOCKED : { status });
