--
-- The read-only helpers of resharding are as safe to run as a SELECT:
-- reshard_check and reshard_dry_run evaluate the partition key, which may call
-- the table owner's code, so they run it as the owner in a
-- security-restricted operation, as ANALYZE does, never with the caller's
-- rights, and only for callers who may read the table.
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS subsetting CASCADE;
DROP ROLE IF EXISTS regress_helper_owner;
DROP ROLE IF EXISTS regress_helper_member;
DROP ROLE IF EXISTS regress_helper_stranger;
RESET client_min_messages;
CREATE EXTENSION subsetting;
CREATE ROLE regress_helper_owner;
CREATE ROLE regress_helper_member IN ROLE regress_helper_owner;
CREATE ROLE regress_helper_stranger;
GRANT CREATE ON SCHEMA public TO regress_helper_owner;
-- a table only the member may read
CREATE TABLE member_secret (x int);
INSERT INTO member_secret VALUES (1);
GRANT SELECT ON member_secret TO regress_helper_member;

SET ROLE regress_helper_owner;
-- The owner's key function, and what it does when it runs: nothing while
-- rows go in, then (as the table's owner chooses) say who runs it and
-- change a setting, take back the caller's rights (RESET ROLE) and make its
-- owner superuser, or read what only the caller may read.
CREATE TABLE key_mode (mode text);
INSERT INTO key_mode VALUES ('quiet');
CREATE FUNCTION owner_act() RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    mode text := (SELECT k.mode FROM public.key_mode AS k);
BEGIN
    IF mode = 'tell' THEN
        RAISE NOTICE 'the key runs as %, search_path %', current_user, current_setting('search_path');
        PERFORM set_config('work_mem', '1234kB', false);
    ELSIF mode = 'escalate' THEN
        EXECUTE 'RESET ROLE';
        EXECUTE 'ALTER ROLE regress_helper_owner SUPERUSER';
    ELSIF mode = 'alter role' THEN
        EXECUTE 'ALTER ROLE regress_helper_owner SUPERUSER';
    ELSIF mode = 'read secret' THEN
        PERFORM count(*) FROM public.member_secret;
    END IF;
END
$$;
CREATE FUNCTION owner_key(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    PERFORM public.owner_act();
    RETURN id;
END
$$;
CREATE FUNCTION owner_plus(bigint, bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT public.owner_key($1) + $2 $$;
CREATE OPERATOR ## (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = owner_plus);

CREATE TABLE by_function (id bigint NOT NULL) PARTITION BY LIST (jumphash(owner_key(id), 2));
CREATE TABLE by_function_0 PARTITION OF by_function FOR VALUES IN (0);
CREATE TABLE by_function_1 PARTITION OF by_function FOR VALUES IN (1);
CREATE TABLE by_operator (id bigint NOT NULL) PARTITION BY LIST (jumpbackhash(id ## 0, 2));
CREATE TABLE by_operator_0 PARTITION OF by_operator FOR VALUES IN (0);
CREATE TABLE by_operator_1 PARTITION OF by_operator FOR VALUES IN (1);
INSERT INTO by_function VALUES (10), (11), (12);
INSERT INTO by_operator VALUES (10), (11), (12);
RESET ROLE;

-- A superuser runs the documented checks: the owner's code runs as the
-- owner, with a safe search_path, and its setting does not outlive the call.
UPDATE key_mode SET mode = 'tell';
SHOW work_mem;
SELECT * FROM reshard_check('by_function') ORDER BY bucket;
SELECT * FROM reshard_dry_run('by_function') ORDER BY bucket;
SHOW work_mem;
SELECT current_user;

-- It cannot take back the caller's rights, nor make its owner superuser.
UPDATE key_mode SET mode = 'escalate';
SELECT * FROM reshard_check('by_function');
SELECT * FROM reshard_dry_run('by_function');
UPDATE key_mode SET mode = 'alter role';
DO $$
BEGIN
    PERFORM FROM reshard_check('by_function');
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'ALTER ROLE refused (%)', SQLSTATE;	-- the message differs by version
END
$$;
SELECT current_user, rolsuper FROM pg_roles WHERE rolname = 'regress_helper_owner';

-- Through a user-defined operator in the key, likewise.
UPDATE key_mode SET mode = 'tell';
SELECT * FROM reshard_check('by_operator') ORDER BY bucket;
UPDATE key_mode SET mode = 'escalate';
SELECT * FROM reshard_dry_run('by_operator', 3);
SELECT current_user, rolsuper FROM pg_roles WHERE rolname = 'regress_helper_owner';

-- A member of the owner role: the owner's code does not get the member's
-- rights (it cannot read what only the member may read).
UPDATE key_mode SET mode = 'read secret';
SET ROLE regress_helper_member;
SELECT count(*) AS the_member_reads FROM member_secret;
SELECT * FROM reshard_check('by_function');
RESET ROLE;
UPDATE key_mode SET mode = 'quiet';

-- A role that may not read the table may not count its rows.
SET ROLE regress_helper_stranger;
SELECT * FROM reshard_check('by_function');
SELECT * FROM reshard_dry_run('by_function');
RESET ROLE;
GRANT SELECT ON by_function TO regress_helper_stranger;
SET ROLE regress_helper_stranger;
SELECT * FROM reshard_check('by_function') ORDER BY bucket;
RESET ROLE;

-- Nor one whose row-level security hides rows.
ALTER TABLE by_function ENABLE ROW LEVEL SECURITY;
SET ROLE regress_helper_stranger;
SELECT * FROM reshard_check('by_function');
RESET ROLE;
ALTER TABLE by_function DISABLE ROW LEVEL SECURITY;

-- Rows with a NULL key: PostgreSQL puts them into the hash partition of
-- remainder 0, where they stay whatever the bucket count.
CREATE TABLE nullable (id bigint) PARTITION BY HASH (id jumpbackhash3_int8_ops);
SELECT format('CREATE TABLE nullable_%s PARTITION OF nullable FOR VALUES WITH (MODULUS 3, REMAINDER %s)', b, b)
FROM generate_series(0, 2) AS b \gexec
INSERT INTO nullable SELECT NULLIF(i, 0) FROM generate_series(0, 99) AS i;
INSERT INTO nullable VALUES (NULL);
SELECT partition, bucket, rows, misplaced_rows FROM reshard_check('nullable') ORDER BY bucket;
SELECT partition, bucket, rows, rows_to_move,
       (SELECT count(*) FROM nullable_0 WHERE id IS NULL) AS null_keys_in_0,
       (SELECT count(*) FROM nullable p WHERE p.tableoid = partition AND jumpbackhash(p.id, 4) <> bucket)
           AS keys_to_move
FROM reshard_dry_run('nullable') ORDER BY bucket;

DROP TABLE nullable, by_function, by_operator, member_secret, key_mode;
DROP OPERATOR ## (bigint, bigint);
DROP FUNCTION owner_plus(bigint, bigint), owner_key(bigint), owner_act();
REVOKE CREATE ON SCHEMA public FROM regress_helper_owner;
DROP ROLE regress_helper_member, regress_helper_stranger, regress_helper_owner;
