const hexGroup = () => Math.floor(Math.random() * 0x10000).toString(16);

/**
 * A documentation address (RFC 3849) in a /64 of its own for each call (the limits count an IPv6
 * address by its /64): they start empty for it, whichever test files ran before in the same runtime.
 */
export const freshClientAddress = () => `2001:db8:${hexGroup()}:${hexGroup()}::1`;

/**
 * Windows are aligned to the clock: with less than `needMs` left in this one, start in the
 * next, so that the requests cannot straddle two windows.
 */
export async function awaitRoomInWindow(windowMs: number, needMs: number) {
  const leftMs = windowMs - (Date.now() % windowMs);
  if (leftMs < needMs) await new Promise((resolve) => setTimeout(resolve, leftMs + 50));
}

/** Whole seconds left in the clock-aligned window of `windowMs`, as `Retry-After` counts them. */
export const secondsLeftIn = (windowMs: number) => Math.ceil((windowMs - (Date.now() % windowMs)) / 1000);
