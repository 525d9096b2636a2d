/**
 * The per-minute limit of one key, as `API_KEY_MINUTE_LIMITER` enforces it: the binding does not
 * tell its `simple` settings, so they are written here too, and a check holds them equal to
 * `wrangler.toml`'s in every environment (test/node/deploy-config.test.ts).
 */
export const MINUTE_LIMIT = 480;
/** The limiter's `period`, in milliseconds: what a 429's `Retry-After` counts down to. */
export const MINUTE_MS = 60_000;
