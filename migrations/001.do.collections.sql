-- The generic collections (docs/contract.md, "Collections"): one table each, items kept as the JSON text given.
-- Ids come from the identity's sequence: positive, increasing, unique across every replica, and
-- never reused; capped at 2^53 - 1, the largest id a JSON client reads exactly.
CREATE TABLE users (
  id bigint GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991) PRIMARY KEY,
  item json NOT NULL
);

CREATE TABLE products (
  id bigint GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991) PRIMARY KEY,
  item json NOT NULL
);
