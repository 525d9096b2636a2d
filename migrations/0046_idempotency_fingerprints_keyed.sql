-- Requests' fingerprints are keyed (HMAC under a key derived from SECRETS_ENCRYPTION_KEY) from now
-- on: a plain SHA-256 of a body holding a secret let a database dump test guesses of it. The plain
-- ones kept so far (a day's worth at most) are dropped: a retry they would have replayed answers
-- 422, as a key reused for another request, and is not run twice.
UPDATE `idempotency_keys` SET `request_hash` = 'unkeyed';
