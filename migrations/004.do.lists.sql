-- What lists of the collections need (lib/postgres.ts). The tables are locked against writes while
-- this runs, so that no write of a replica still running the previous version is missed.
LOCK TABLE users, products IN SHARE ROW EXCLUSIVE MODE;

-- The fingerprint of the item schema whose serializer wrote `item`: such an item is the JSON the API
-- answers for it, and a list sends it as it is. NULL: written as JSON.stringify writes the body (in
-- the client's key order), parsed and serialized again to be listed.
ALTER TABLE users ADD COLUMN serialized_by text;
ALTER TABLE products ADD COLUMN serialized_by text;

-- The size of each collection, kept by triggers in the transaction of every insert and delete:
-- Total-Count and User-Count read it in O(1), in the snapshot of the items they count
-- (docs/contract.md, Pagination by Range).
CREATE TABLE collection_sizes (
  collection text PRIMARY KEY,
  size bigint NOT NULL CHECK (size >= 0)
);

INSERT INTO collection_sizes (collection, size)
  SELECT 'users', count(*) FROM users
  UNION ALL
  SELECT 'products', count(*) FROM products;

CREATE FUNCTION collection_sizes_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE collection_sizes SET size = size + (SELECT count(*) FROM inserted) WHERE collection = TG_TABLE_NAME;
  RETURN NULL;
END $$;

CREATE FUNCTION collection_sizes_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE collection_sizes SET size = size - (SELECT count(*) FROM deleted) WHERE collection = TG_TABLE_NAME;
  RETURN NULL;
END $$;

CREATE FUNCTION collection_sizes_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE collection_sizes SET size = 0 WHERE collection = TG_TABLE_NAME;
  RETURN NULL;
END $$;

CREATE TRIGGER users_inserted AFTER INSERT ON users REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION collection_sizes_inserted();
CREATE TRIGGER users_deleted AFTER DELETE ON users REFERENCING OLD TABLE AS deleted
  FOR EACH STATEMENT EXECUTE FUNCTION collection_sizes_deleted();
CREATE TRIGGER users_truncated AFTER TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION collection_sizes_truncated();

CREATE TRIGGER products_inserted AFTER INSERT ON products REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION collection_sizes_inserted();
CREATE TRIGGER products_deleted AFTER DELETE ON products REFERENCING OLD TABLE AS deleted
  FOR EACH STATEMENT EXECUTE FUNCTION collection_sizes_deleted();
CREATE TRIGGER products_truncated AFTER TRUNCATE ON products
  FOR EACH STATEMENT EXECUTE FUNCTION collection_sizes_truncated();
