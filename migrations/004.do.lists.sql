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
-- (docs/contract.md, Pagination by Range). Spread over 16 rows a collection, chosen by the
-- backend that writes: one row would queue every concurrent write of a collection on its lock
-- until commit (inserts/s fell by half at 40 writers). A size is the sum of its collection's rows.
CREATE TABLE collection_sizes (
  collection text NOT NULL,
  shard smallint NOT NULL,
  size bigint NOT NULL,
  PRIMARY KEY (collection, shard)
);

INSERT INTO collection_sizes (collection, shard, size)
  SELECT 'users', 0, count(*) FROM users
  UNION ALL
  SELECT 'products', 0, count(*) FROM products;

CREATE FUNCTION collection_sizes_add(collection text, delta bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO collection_sizes (collection, shard, size) VALUES (collection, pg_backend_pid() % 16, delta)
  ON CONFLICT (collection, shard) DO UPDATE SET size = collection_sizes.size + excluded.size
$$;

CREATE FUNCTION collection_sizes_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM collection_sizes_add(TG_TABLE_NAME, (SELECT count(*) FROM inserted));
  RETURN NULL;
END $$;

CREATE FUNCTION collection_sizes_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM collection_sizes_add(TG_TABLE_NAME, -(SELECT count(*) FROM deleted));
  RETURN NULL;
END $$;

CREATE FUNCTION collection_sizes_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM collection_sizes WHERE collection = TG_TABLE_NAME;
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
