-- The room a collection has under a ceiling of items (COLLECTION_MAX_ITEMS; lib/postgres/repository.ts,
-- docs/operations.md, "The store: memory or PostgreSQL"): the ceiling less the collection's size
-- (collection_sizes, migration 004), never below 0. An insert under a ceiling calls it for the
-- number of its rows (`LIMIT collection_room(…)`), and so first takes a transaction-scoped
-- advisory lock of the collection, which it holds until it commits, its new size with it: the next
-- insert of any replica waits for that commit and reads a size that holds it. Inserts of one
-- collection commit one after another, and none passes the ceiling however many replicas insert
-- at once. Without the lock, two replicas would each read the size before the other's commit and
-- both insert into the last room.
--
-- VOLATILE plpgsql: under READ COMMITTED each statement of the function reads a snapshot of its
-- own, taken here after the lock is held, not the snapshot of the INSERT that calls it, taken
-- before the wait. Deletes take no lock: one not yet committed is still counted, which at worst
-- refuses an item that would have had room a moment later, and never admits one too many.
CREATE FUNCTION collection_room(collection text, max_items bigint) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  used bigint;
BEGIN
  -- Keys of two int4, a space of their own beside the migrations' bigint lock: "serv" and the collection.
  PERFORM pg_advisory_xact_lock(x'73657276'::int, hashtext(collection));
  SELECT coalesce(sum(size), 0) INTO used FROM collection_sizes WHERE collection_sizes.collection = collection_room.collection;
  RETURN greatest(max_items - used, 0);
END $$;
