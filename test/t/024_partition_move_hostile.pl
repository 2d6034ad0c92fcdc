# test/t/024_partition_move_hostile.pl
#	partition_move tried as a hostile DBA would, on a coordinator and one
#	postgres_fdw server, by a table owner app who is not a superuser (a
#	password login there):
#	- another role, spy, has CREATE on the schema on both servers and
#	  default privileges FOR ROLE app on its tables and functions there:
#	  while a move waits for its cutover (a reader of app's holds the
#	  table), in each direction, spy may use nothing the engine made, here
#	  or on the server; afterwards the moved partition has exactly the
#	  grants it had; a table spy made on the server under the name a
#	  partition would take there refuses that move before anything is made;
#	  nor may peek, a role without default privileges, to which an event
#	  trigger of the DBA's, on both servers, grants the columns of every
#	  table, view and foreign table made;
#	- app's role settings, here (statement_timeout 1 s, lock_timeout 1 ms,
#	  default_tablespace, idle_in_transaction_session_timeout) and on the
#	  server (statement_timeout 200 ms, lock_timeout 1 ms) fail no move,
#	  and the table moved back is in the parent's tablespace;
#	  default_transaction_read_only, here or there, refuses the move at once
#	  and says why;
#	- the databases' settings (ALTER DATABASE ... SET, for every session
#	  there, postgres_fdw's and dblink's included), here (statement_timeout
#	  1 s, lock_timeout 1 ms, default_tablespace, default_table_access_method,
#	  idle_in_transaction_session_timeout 1 s) and on the server's database
#	  (statement_timeout 200 ms, lock_timeout 1 ms,
#	  idle_in_transaction_session_timeout 1 s) fail no move, each way, held
#	  at its cutover longer than the statement_timeout here; the table moved
#	  back, and its index, are in the parent's tablespace, and it is of the
#	  parent's access method (heap), not of the database's
#	  default_table_access_method (heap2, here);
#	  default_transaction_read_only of the database here, or of the
#	  server's, refuses a move at once, either way, says why, and nothing is
#	  made on either server;
#	- a default changed on the table while a move waits for its cutover is
#	  kept, whichever gets the table first: the move (the change then
#	  follows it) or the change (the move then fails naming it, and is done
#	  when called again);
#	- on PostgreSQL 17 on, a parent of an access method of its own (heap2)
#	  keeps it through a resharding, and a partition moved back is of it.
#	Each time, the table holds what it held, and nothing of the engine is
#	left on either server.
#
# suite: partition move
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest qw(:DEFAULT !on);

my $coordinator = new_server('coordinator');
my $server = new_server('server_a');
link_servers($coordinator, { a => $server });
password_logins($server, 'app');

# on(NODE, SQL): the test's own statements, which wait as long as they
# need whatever the role's and database's settings under test say (a
# statement_timeout of 200 ms there would cut a catalog query on a busy
# machine short).
sub on
{
	my ($node, $sql) = @_;
	return $node->safe_psql('postgres', "SET statement_timeout = 0; SET lock_timeout = 0; $sql");
}

my $tablespace = PostgreSQL::Test::Utils::tempdir();
for my $node ($coordinator, $server)
{
	on($node,
		"CREATE ROLE app LOGIN PASSWORD 'app secret'; CREATE ROLE spy LOGIN;
		 GRANT CREATE ON SCHEMA public TO app, spy;
		 ALTER DEFAULT PRIVILEGES FOR ROLE app IN SCHEMA public GRANT ALL ON TABLES TO spy;
		 ALTER DEFAULT PRIVILEGES FOR ROLE app IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO spy;
		 ALTER DEFAULT PRIVILEGES FOR ROLE app GRANT ALL ON TABLES TO spy");
	grant_columns_of_new_tables($node, 'peek');
}
on($coordinator,
	"GRANT USAGE ON FOREIGN SERVER a TO app;
	 CREATE USER MAPPING FOR app SERVER a OPTIONS (user 'app', password 'app secret');
	 CREATE USER MAPPING FOR spy SERVER a OPTIONS (user 'app', password 'app secret');
	 CREATE TABLESPACE elsewhere LOCATION '$tablespace';
	 GRANT CREATE ON TABLESPACE elsewhere TO app");

# app's table: 8 partitions; spy's default privileges are revoked from it
# (as a DBA would), and spy may read one column of items_1.
sub as_app
{
	my ($sql) = @_;
	return on($coordinator, "SET ROLE app; $sql");
}
as_app("CREATE TABLE items (id bigint NOT NULL, v text DEFAULT 'new', n int NOT NULL DEFAULT 0)
            PARTITION BY HASH (id jumpbackhash8_int8_ops);
        SELECT format('CREATE TABLE items_%s PARTITION OF items FOR VALUES WITH (MODULUS 8, REMAINDER %s)', i, i)
        FROM generate_series(0, 7) AS i \\gexec
        CREATE INDEX ON items (id);
        INSERT INTO items SELECT i, md5(i::text), 0 FROM generate_series(1, 100000) AS i;
        SELECT format('REVOKE ALL ON %s FROM spy', c.oid::regclass) FROM pg_class c
        WHERE c.relname ~ '^items' AND c.relkind IN ('r', 'p') \\gexec
        GRANT SELECT (id) ON items_1 TO spy;
        CREATE TABLE before AS SELECT * FROM items;");
my $same = "SELECT (SELECT count(*) FROM (TABLE items EXCEPT ALL TABLE before) AS x)
                 + (SELECT count(*) FROM (TABLE before EXCEPT ALL TABLE items) AS y)";
my $grants = "SELECT coalesce(c.relacl::text, '') || ' '
                     || (SELECT string_agg(a.attname || '=' || coalesce(a.attacl::text, ''), ' ' ORDER BY a.attnum)
                         FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)
              FROM pg_class c WHERE c.oid = 'items_1'::regclass";
my $grants_before = on($coordinator, $grants);

# What the engine made that spy (or peek) may use, on NODE: its relations
# (every one not of an extension whose name begins reshard_, or the table of
# a move on the server) and functions (reshard_...): "N made, M usable by
# spy: ...".
sub spy_may_use
{
	my ($node) = @_;
	return on($node,
		"WITH made AS (
		     SELECT c.oid::regclass::text AS name,
		            has_table_privilege('spy', c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
		            OR has_any_column_privilege('spy', c.oid, 'SELECT, INSERT, UPDATE, REFERENCES')
		            OR has_any_column_privilege('peek', c.oid, 'SELECT, INSERT, UPDATE, REFERENCES') AS usable
		     FROM pg_class c
		     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'f', 'm', 'S')
		       AND (c.relname LIKE 'reshard\\_%' OR c.relname LIKE 'items\\_%' AND c.relkind <> 'f' AND '" . $node->name . "' = 'server_a')
		       AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
		     UNION ALL
		     SELECT p.oid::regprocedure::text, has_function_privilege('spy', p.oid, 'EXECUTE')
		     FROM pg_proc p
		     WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'reshard\\_%'
		       AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'))
		 SELECT count(*) || ' made, ' || count(*) FILTER (WHERE usable) || ' usable by spy'
		        || coalesce(': ' || string_agg(name, ', ') FILTER (WHERE usable), '')
		 FROM made");
}

# move_held(PARTITION, TARGET, WHILE_HELD): app's move of PARTITION to
# TARGET ('a' or NULL), held at its cutover by a reader of app's that takes
# the table once the move copies; WHILE_HELD runs then (it gets whether the
# move was held; a move that was past its cutover first is not).  Returns
# what the call said (stderr).
sub move_held
{
	my ($partition, $target, $while_held) = @_;
	my $since = on($coordinator, 'SELECT clock_timestamp()');
	my $move = start_sql($coordinator,
		[ 'SET ROLE app', "CALL partition_move('$partition', $target, cutover_budget => '200 ms', cutover_attempts => 1000)" ]);
	wait_while_running($coordinator, "SELECT phase NOT IN ('setup', 'capture') FROM reshard_progress WHERE started > '$since'",
		"the move of $partition to copy", $move);
	# (the reader's session sets its own timeouts: a database's would end
	# its hold, which lasts until it is terminated: its sleep outlasts any
	# wait of the test's)
	my $reader = start_sql($coordinator,
		'SET statement_timeout = 0; SET lock_timeout = 0; SET idle_in_transaction_session_timeout = 0;
		 SET ROLE app; BEGIN; LOCK TABLE items IN ACCESS SHARE MODE; SELECT pg_sleep('
		  . 10 * $PostgreSQL::Test::Utils::timeout_default . ')');
	wait_while_running($coordinator,
		"SELECT phase = 'cutover' AND cutover_attempts > 0 OR phase IN ('finish', 'done') FROM reshard_progress",
		"the move of $partition to fail a cutover attempt (a reader holds items) or to get past its cutover", $move);
	my $held = on($coordinator, "SELECT phase = 'cutover' FROM reshard_progress") eq 't';
	note "the move of $partition to " . ($target eq 'NULL' ? 'here' : "server $target") . ($held ? ' is held at its cutover' : ' was past its cutover');
	$while_held->($held);
	on($coordinator, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%LOCK TABLE items%' AND pid <> pg_backend_pid()");
	finish_sql($reader);
	my ($out, $err) = finish_sql($move);
	return $err;
}

# Default privileges and CREATE rights of spy, both directions.
for my $direction ([ 'items_1', "'a'", 'to server a' ], [ 'items_1', 'NULL', 'back here' ])
{
	my ($partition, $target, $what) = @$direction;
	my $err = move_held($partition, $target, sub {
		my ($held) = @_;
	  SKIP:
		{
			skip "moving $what: the move was past its cutover when the reader took the table", 2 unless $held;
			like(spy_may_use($coordinator), qr/^[1-9][0-9]* made, 0 usable by spy$/,
				"moving $what, held at the cutover: spy may use nothing the engine made here");
			like(spy_may_use($server), qr/^[1-9][0-9]* made, 0 usable by spy$/,
				"moving $what, held at the cutover: spy may use nothing the engine made on server a");
		}
	});
	unlike($err, qr/ERROR/, "moving $what: done") or diag($err);
	is(on($coordinator, $grants), $grants_before, "moving $what: items_1 has exactly the grants it had");
	is(on($coordinator, $same), '0', "moving $what: the table holds what it held");
}
is(on($server, "SELECT count(*) FROM pg_class WHERE relname LIKE 'items%'"), '0', 'items_1 is back here, nothing of it on server a');
on($server, "SET ROLE spy; CREATE TABLE items_5 (id bigint)");
like(result_or_error($coordinator, 'postgres', "SET ROLE app; CALL partition_move('items_5', 'a')"),
	qr/ERROR:  cannot move public\.items_5 to server "a": a table public\.items_5 exists there/,
	"a table spy made on server a under items_5's name there refuses the move");
is(on($coordinator, "SELECT count(*) FROM reshard_progress WHERE phase NOT IN ('done', 'aborted')")
	  . ' ' . on($server, "SELECT count(*) FROM items_5"),
	'0 0', 'refused before anything was made; spy\'s table is untouched');
on($server, "DROP TABLE items_5");

# app's role settings.
on($coordinator,
	"ALTER ROLE app SET statement_timeout = '1s'; ALTER ROLE app SET lock_timeout = '1ms';
	 ALTER ROLE app SET default_tablespace = elsewhere; ALTER ROLE app SET idle_in_transaction_session_timeout = '1s'");
on($server, "ALTER ROLE app SET statement_timeout = '200ms'; ALTER ROLE app SET lock_timeout = '1ms'");
# (the settings apply to app's sessions: a session that logs in as app)
my $as_app_session = sub {
	my ($sql) = @_;
	my ($ret, $out, $err) = $coordinator->psql('postgres', $sql, extra_params => [ '-U', 'app' ]);
	return $err;
};
for my $partition ('items_2', 'items_3')
{
	my $err = $as_app_session->("CALL partition_move('$partition', 'a')");
	unlike($err, qr/ERROR/, "app's settings here and there: $partition moved to server a") or diag($err);
}
my $err = $as_app_session->("CALL partition_move('items_2', NULL)");
unlike($err, qr/ERROR/, "app's settings here and there: items_2 moved back") or diag($err);
is(on($coordinator, "SELECT reltablespace FROM pg_class WHERE oid = 'items_2'::regclass"), '0',
	"items_2 is back in the parent's tablespace, not in app's default_tablespace");
on($coordinator, "ALTER ROLE app SET default_transaction_read_only = on");
like($as_app_session->("CALL partition_move('items_4', 'a')"),
	qr/ERROR:  cannot reshard public\.items in a read-only transaction\nDETAIL:  default_transaction_read_only is on/,
	"default_transaction_read_only for app here: the move is refused, and says why");
unlike($as_app_session->("SET default_transaction_read_only = off; CALL partition_move('items_4', 'a')"), qr/ERROR/,
	'with default_transaction_read_only off in the session, it moves');
on($coordinator, "ALTER ROLE app RESET default_transaction_read_only");
on($server, "ALTER ROLE app SET default_transaction_read_only = on");
like($as_app_session->("CALL partition_move('items_3', NULL)"),
	qr/ERROR:  cannot move public\.items_3 from server "a": the sessions of app there are read-only \(default_transaction_read_only\)/,
	"default_transaction_read_only for app on server a: the move is refused at once, and says why");
is(on($coordinator, "SELECT count(*) FROM reshard_progress WHERE phase NOT IN ('done', 'aborted')"), '0',
	'nothing was made');
on($server, "ALTER ROLE app RESET ALL");
on($coordinator, "ALTER ROLE app RESET ALL");
is(on($coordinator, $same), '0', "after the moves under app's settings, the table holds what it held");

# The databases' settings, here and on server a (the database its foreign
# server names).  The sessions of this test's checks are under them too,
# but for the timeouts (on()).
on($coordinator,
	"CREATE ACCESS METHOD heap2 TYPE TABLE HANDLER heap_tableam_handler;
	 ALTER DATABASE postgres SET statement_timeout = '1s'; ALTER DATABASE postgres SET lock_timeout = '1ms';
	 ALTER DATABASE postgres SET default_tablespace = elsewhere; ALTER DATABASE postgres SET default_table_access_method = heap2;
	 ALTER DATABASE postgres SET idle_in_transaction_session_timeout = '1s'");
on($server,
	"ALTER DATABASE postgres SET statement_timeout = '200ms'; ALTER DATABASE postgres SET lock_timeout = '1ms';
	 ALTER DATABASE postgres SET idle_in_transaction_session_timeout = '1s'");
# (a session of its own, without on()'s SETs, to see them)
is($coordinator->safe_psql('postgres', "SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings WHERE source = 'database'")
	  . ' / ' . $server->safe_psql('postgres', "SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings WHERE source = 'database'"),
	'default_table_access_method=heap2 default_tablespace=elsewhere idle_in_transaction_session_timeout=1000 lock_timeout=1 statement_timeout=1000'
	  . ' / idle_in_transaction_session_timeout=1000 lock_timeout=1 statement_timeout=200',
	"the databases' settings apply to new sessions, here and on server a");
# A move each way, held at its cutover until the call has run longer than
# the statement_timeout here (a move not held, past its cutover first, is
# shorter: it still must not fail).
for my $direction ([ 'items_5', "'a'", 'to server a', 'a' ], [ 'items_3', 'NULL', 'back here', 'here' ])
{
	my ($partition, $target, $what, $where) = @$direction;
	my $err = move_held($partition, $target, sub {
		my ($held) = @_;
		wait_until($coordinator,
			"SELECT clock_timestamp() - started > interval '1.5 s' FROM reshard_progress WHERE phase = 'cutover'",
			"the move of $partition, held at its cutover, to have run 1.5 s")
		  if $held;
	});
	unlike($err, qr/ERROR/, "the databases' settings here and there: $partition moved $what") or diag($err);
	is(on($coordinator, "SELECT r.phase || ' ' || coalesce(p.server, 'here') FROM reshard_progress r, partition_placement p
	                     WHERE r.\"table\" = 'public.items' AND p.partition = '$partition'::regclass"),
		"done $where", "the databases' settings here and there: the move of $partition is done, it is $where");
}
is(on($coordinator,
		"SELECT count(*) FILTER (WHERE reltablespace <> 0) || ' of ' || count(*) FROM pg_class
		 WHERE oid = 'items_3'::regclass OR oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'items_3'::regclass)"),
	'0 of 2', "items_3 and its index are back in the parent's tablespace, not in the database's default_tablespace");
is(on($coordinator, "SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'items_3'::regclass"),
	'heap', "items_3 is back of the access method a partition of items has, not of the database's default_table_access_method");
# default_transaction_read_only of the database here, then of server a's:
# refused at once, either way, saying why.  (The sessions that reset it
# set it off first.)
on($coordinator, "ALTER DATABASE postgres SET default_transaction_read_only = on");
like($as_app_session->("CALL partition_move('items_6', 'a')"),
	qr/ERROR:  cannot reshard public\.items in a read-only transaction\nDETAIL:  default_transaction_read_only is on/,
	"default_transaction_read_only of the database here: the move is refused, and says why");
on($coordinator, "SET default_transaction_read_only = off; ALTER DATABASE postgres RESET default_transaction_read_only");
on($server, "ALTER DATABASE postgres SET default_transaction_read_only = on");
like($as_app_session->("CALL partition_move('items_6', 'a')"),
	qr/ERROR:  cannot move public\.items_6 to server "a": the sessions of app there are read-only \(default_transaction_read_only\)/,
	"default_transaction_read_only of server a's database: the move there is refused at once, and says why");
like($as_app_session->("CALL partition_move('items_4', NULL)"),
	qr/ERROR:  cannot move public\.items_4 from server "a": the sessions of app there are read-only \(default_transaction_read_only\)/,
	"default_transaction_read_only of server a's database: the move from there is refused at once, and says why");
is(on($coordinator, "SELECT count(*) FROM reshard_progress WHERE phase NOT IN ('done', 'aborted')")
	  . ' ' . on($coordinator, "SELECT string_agg(coalesce(server, 'here'), ' ' ORDER BY partition::text) FROM partition_placement
	                            WHERE partition IN ('items_4'::regclass, 'items_6'::regclass)")
	  . ' ' . on($server, "SELECT count(*) FROM pg_class WHERE relname = 'items_6'")
	  . ' ' . on($coordinator, $ENGINE_LEFTOVERS) . ' ' . on($server, $ENGINE_LEFTOVERS),
	'0 a here 0 none none', 'refused before anything was made, here or on server a');
on($server, "SET default_transaction_read_only = off; ALTER DATABASE postgres RESET ALL");
on($coordinator, "ALTER DATABASE postgres RESET ALL");
is(on($coordinator, "SELECT count(*) FROM pg_db_role_setting WHERE setrole = 0")
	  . ' ' . on($server, "SELECT count(*) FROM pg_db_role_setting WHERE setrole = 0"),
	'0 0', "the databases have no setting left, here or on server a");
is(on($coordinator, $same), '0', "after the moves under the databases' settings, the table holds what it held");

# A default changed while a move waits for its cutover.
my $alter;
$err = move_held('items_6', "'a'", sub {
	my ($held) = @_;
	$alter = start_sql($coordinator, [ 'SET ROLE app', "ALTER TABLE items ALTER COLUMN v SET DEFAULT 'during'" ]);
	# (held, it waits for the reader's lock, queued with the cutover's)
	wait_until($coordinator,
		"SELECT EXISTS (SELECT FROM pg_stat_activity WHERE query LIKE 'ALTER TABLE items ALTER COLUMN v%' AND wait_event_type = 'Lock')",
		'the ALTER TABLE to wait for a lock')
	  if $held;
});
my ($alter_out, $alter_err) = finish_sql($alter);
is($alter_err, '', 'the ALTER TABLE made during the move commits');
if ($err =~ /ERROR/)
{
	like($err, qr/ERROR:  table public\.items changed while it was being resharded\nDETAIL:  .*now public\.items: column v default 'during'::text/,
		'the ALTER got the table first: the move fails, naming the change');
	$err = result_or_error($coordinator, 'postgres', "SET ROLE app; CALL partition_move('items_6', 'a')");
	unlike($err, qr/ERROR/, 'called again, it moves');
}
else
{
	is(on($coordinator, q{SELECT phase FROM reshard_progress WHERE "table" = 'public.items'}), 'done',
		'the move got the table first: it is done, and the ALTER followed it');
}
is(on($coordinator,
		"SELECT string_agg(DISTINCT coalesce(pg_get_expr(d.adbin, d.adrelid), 'none'), ' ') || ' ' || count(*)
		 FROM pg_inherits i RIGHT JOIN pg_class c ON c.oid = i.inhrelid
		 JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'v'
		 LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
		 WHERE c.oid = 'items'::regclass OR i.inhparent = 'items'::regclass"),
	"'during'::text 9", "the new default is the parent's and every partition's, the moved one's too");
is(on($coordinator, "SELECT coalesce(server, 'here') FROM partition_placement WHERE partition = 'items_6'::regclass"), 'a',
	'items_6 is on server a');
on($coordinator, "SET ROLE app; INSERT INTO items (id) SELECT i FROM generate_series(-200, -1) AS i; INSERT INTO before (id, v, n) SELECT i, 'during', 0 FROM generate_series(-200, -1) AS i");
is(on($coordinator, $same), '0', 'the table holds what it held, and rows written since take the new default, on the servers too');

# A parent of an access method of its own (PostgreSQL 17 on): a resharding
# keeps it (its new parent is made USING it), and a partition moved back
# here is of it (heap2, made above; the partition added is of the heap,
# made LIKE the table).
SKIP:
{
	skip 'a partitioned table has an access method from PostgreSQL 17 on', 2 if $coordinator->pg_version < 17;
	my $ams = "SELECT string_agg(c.relname || ' ' || a.amname, ', ' ORDER BY c.relname)
	           FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname ~ '^am_t(_[0-9])?\$'";
	on($coordinator,
		"SET ROLE app;
		 CREATE TABLE am_t (id bigint NOT NULL) PARTITION BY HASH (id jumpbackhash2_int8_ops) USING heap2;
		 CREATE TABLE am_t_0 PARTITION OF am_t FOR VALUES WITH (MODULUS 2, REMAINDER 0);
		 CREATE TABLE am_t_1 PARTITION OF am_t FOR VALUES WITH (MODULUS 2, REMAINDER 1);
		 INSERT INTO am_t SELECT generate_series(1, 300);
		 CREATE TABLE am_t_2 (LIKE am_t INCLUDING ALL);
		 CALL reshard_add_partition('am_t', 'am_t_2');
		 CALL partition_move('am_t_0', 'a');
		 CALL partition_move('am_t_0', NULL)");
	is(on($coordinator, $ams), 'am_t heap2, am_t_0 heap2, am_t_1 heap2, am_t_2 heap',
		"resharding and moving back keep the parent's access method, and the partitions' of it");
	is(on($coordinator, "SELECT count(*) || ' ' || sum(id) FROM am_t"), '300 45150', 'am_t holds its 300 rows');
}

is(on($coordinator, $ENGINE_LEFTOVERS) . ' ' . on($server, $ENGINE_LEFTOVERS), 'none none',
	'nothing of the engine is left, here or on server a');

done_testing();
