-- Failed authentications, counted for every replica at once (docs/contract.md, Authentication;
-- lib/auth-failures.ts). A key is a client address, or an address and the hash of an identity; a
-- row counts that key's failures in the window that ends at reset_at, and is forgotten then, never
-- sooner: flooding the table with other keys evicts nothing. Ended rows are reused by the key's
-- next failure or deleted in small batches as failures are recorded (the index finds them).
CREATE TABLE auth_failures (
  key text PRIMARY KEY,
  failures integer NOT NULL CHECK (failures > 0),
  reset_at timestamptz NOT NULL
);

CREATE INDEX auth_failures_reset_at ON auth_failures (reset_at);
