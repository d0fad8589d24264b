-- The experiment list filtered by user (and by name, or sorted by name): the count of the
-- pagination total and the page read the owner's entries of this index alone. With 0012's
-- experiments_owner (owner_id only) each matching row was read from the table to test its name,
-- a column stored after the context tarball (reads14; bench/store_scale.cc measures it).
-- Same SQL on SQLite and PostgreSQL.
DROP INDEX experiments_owner;
CREATE INDEX experiments_owner_name ON experiments(owner_id, name);
