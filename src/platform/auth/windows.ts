/**
 * The end of the window of `lengthMs`, aligned to the clock, that holds `now`. Local development
 * and the tests emulate the rate-limiting binding's windows this way; in production it is the
 * best estimate there is (the binding tells no time).
 */
export const windowEnd = (now: number, lengthMs: number) => now - (now % lengthMs) + lengthMs;

/** `Retry-After`: whole seconds until `time`, at least one. */
export const secondsUntil = (time: number, now = Date.now()) => Math.max(1, Math.ceil((time - now) / 1000));
