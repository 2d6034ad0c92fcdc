# test/t/025_partition_move_remote_sessions.pl
#	The sessions the engine opens on a server (dblink's, its own libpq
#	connection's, postgres_fdw's), on a coordinator and one server with the
#	extension:
#	- the owner's search_path on the server begins with a schema of another
#	  role, mallory, whose functions, aggregate and operators there shadow
#	  pg_catalog's (quote_ident, count, =) and record each call: partitions
#	  moved to the server and back, a move from the server alone, and a
#	  resharding with shard_views of a table on that server (a bucket
#	  added, then removed) succeed, and
#	  none of mallory's code ran (a session of the owner's that does not set
#	  its search_path does run it: the trap works);
#	- the server's database has idle_in_transaction_session_timeout 100 ms
#	  and statement_timeout 200 ms (lock_timeout 10 ms): partitions moved to
#	  it and back succeed, and so do a removal and an addition with
#	  shard_views of a table there;
#	- a table of a schema whose name needs quoting ("Up Per") moved to the
#	  server and back, and resharded (a bucket removed, then added) with
#	  shard_views while its other partition is on the server.
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
use SubsettingTest;

my $coordinator = new_server('coordinator');
my $server = new_server('server_a');
link_servers($coordinator, { a => $server });

# Checks on server a set their search_path first: the owner's there is
# mallory's.
sub on_a
{
	my ($sql) = @_;
	return on($server, "SET search_path = public, pg_catalog; $sql");
}

my $owner = on($server, 'SELECT current_user');
on($coordinator,
	"CREATE TABLE items (id bigint NOT NULL, v text, n int NOT NULL DEFAULT 0)
	     PARTITION BY HASH (id jumpbackhash4_int8_ops);
	 SELECT format('CREATE TABLE items_%s PARTITION OF items FOR VALUES WITH (MODULUS 4, REMAINDER %s)', i, i)
	 FROM generate_series(0, 3) AS i \\gexec
	 CREATE INDEX ON items (id);
	 INSERT INTO items SELECT i, md5(i::text), i % 7 FROM generate_series(1, 20000) AS i;
	 CREATE TABLE before AS SELECT * FROM items;");
my $same = "SELECT (SELECT count(*) FROM (TABLE items EXCEPT ALL TABLE before) AS x)
                 + (SELECT count(*) FROM (TABLE before EXCEPT ALL TABLE items) AS y)";

# mallory's schema trap on server a, first in the owner's search_path there
# (before pg_catalog): a function, an aggregate and operators of the same
# names and argument types as pg_catalog's, each recording its call.
on($server,
	"CREATE ROLE mallory;
	 CREATE SCHEMA trap AUTHORIZATION mallory;
	 SET ROLE mallory;
	 CREATE TABLE trap.calls (what text);
	 GRANT USAGE ON SCHEMA trap TO PUBLIC;
	 GRANT INSERT ON trap.calls TO PUBLIC;
	 CREATE FUNCTION trap.quote_ident(text) RETURNS text LANGUAGE plpgsql
	     AS \$\$BEGIN INSERT INTO trap.calls VALUES ('quote_ident'); RETURN pg_catalog.quote_ident(\$1); END\$\$;
	 CREATE FUNCTION trap.count_final(bigint) RETURNS bigint LANGUAGE plpgsql
	     AS \$\$BEGIN INSERT INTO trap.calls VALUES ('count'); RETURN \$1; END\$\$;
	 CREATE AGGREGATE trap.count(*) (sfunc = pg_catalog.int8inc, stype = bigint, initcond = '0',
	                                 finalfunc = trap.count_final);
	 CREATE FUNCTION trap.name_eq(name, name) RETURNS boolean LANGUAGE plpgsql
	     AS \$\$BEGIN INSERT INTO trap.calls VALUES ('= name'); RETURN pg_catalog.nameeq(\$1, \$2); END\$\$;
	 CREATE OPERATOR trap.= (leftarg = name, rightarg = name, function = trap.name_eq);
	 CREATE FUNCTION trap.oid_eq(oid, oid) RETURNS boolean LANGUAGE plpgsql
	     AS \$\$BEGIN INSERT INTO trap.calls VALUES ('= oid'); RETURN pg_catalog.oideq(\$1, \$2); END\$\$;
	 CREATE OPERATOR trap.= (leftarg = oid, rightarg = oid, function = trap.oid_eq);
	 RESET ROLE;
	 ALTER ROLE $owner IN DATABASE postgres SET search_path = trap, pg_catalog, public");
# (what was called, each once however often it ran)
my $calls = "SELECT coalesce(string_agg(DISTINCT what, ', ' ORDER BY what), 'none') FROM trap.calls";
# The trap works: a session of the owner's that keeps the role's search_path
# runs mallory's code.
is(on($server,
		"SELECT quote_ident('Up Per'), (SELECT count(*) FROM pg_class WHERE relname = 'pg_class'),
		        (SELECT count(*) FROM pg_namespace n JOIN pg_extension x ON x.extnamespace = n.oid WHERE x.extname = 'plpgsql')")
	  . ' / ' . on_a($calls),
	'"Up Per"|1|1 / = name, = oid, count, quote_ident',
	"a session of the owner's on server a that keeps its search_path runs mallory's code");
on_a('TRUNCATE trap.calls');

# Partitions to server a, one back, one from there to here alone.
for my $call ("CALL partition_move('items_1', 'a')", "CALL partition_move('items_2', 'a')",
	"CALL partition_move('items_1', NULL)", "CALL partition_move('items_2', NULL)")
{
	my $err = result_or_error($coordinator, 'postgres', $call);
	unlike($err, qr/ERROR/, "mallory's search_path on server a: $call") or diag($err);
}
is(on($coordinator, $same) . ' ' . on($coordinator, "SELECT count(*) FROM partition_placement WHERE server IS NOT NULL AND partition::text LIKE 'items\\_%'"),
	'0 0', "mallory's search_path on server a: the table holds what it held, every partition here");
is(on_a($calls), 'none', "mallory's search_path on server a: none of mallory's code ran in the moves");

# A resharding with shard_views of a table on server a: rows leave the
# shard there (hidden there at the cutover, deleted after it).
on_a("CREATE TABLE sharded (id bigint NOT NULL, v text); INSERT INTO sharded SELECT i, md5(i::text) FROM generate_series(1, 2000) AS i");
on($coordinator,
	"CREATE TABLE sharded (id bigint NOT NULL, v text) PARTITION BY LIST (jumpbackhash(id, 1));
	 CREATE FOREIGN TABLE sharded_0 PARTITION OF sharded FOR VALUES IN (0) SERVER a OPTIONS (table_name 'sharded');
	 CREATE TABLE sharded_1 (id bigint NOT NULL, v text);");
my $err = result_or_error($coordinator, 'postgres', "CALL reshard_add_partition('sharded', 'sharded_1', shard_views => true)");
unlike($err, qr/ERROR/, "mallory's search_path on server a: reshard_add_partition with shard_views") or diag($err);
is(on($coordinator, "SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || sum(id) FROM sharded")
	  . ' ' . on($coordinator, "SELECT count(*) > 0 FROM ONLY sharded_1"),
	'2000 2000 2001000 t', "mallory's search_path on server a: the sharded table holds what it held, some rows moved here");
# (and removed again: the rows enter the shard there)
$err = result_or_error($coordinator, 'postgres', "CALL reshard_remove_partition('sharded', 'sharded_1', shard_views => true)");
unlike($err, qr/ERROR/, "mallory's search_path on server a: reshard_remove_partition with shard_views") or diag($err);
is(on($coordinator, "SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || sum(id) FROM sharded")
	  . ' ' . on_a("SELECT count(*) FROM sharded"),
	'2000 2000 2001000 2000', "mallory's search_path on server a: the sharded table holds what it held, every row there");
is(on_a($calls), 'none', "mallory's search_path on server a: none of mallory's code ran in the reshardings");
is(on($coordinator, $ENGINE_LEFTOVERS) . ' ' . on_a($ENGINE_LEFTOVERS), 'none none',
	"mallory's search_path on server a: nothing of the engine left here or there");
on($server, "ALTER ROLE $owner IN DATABASE postgres RESET search_path");

# The server's database: short timeouts for every session there.
on($server,
	"ALTER DATABASE postgres SET idle_in_transaction_session_timeout = '100ms';
	 ALTER DATABASE postgres SET statement_timeout = '200ms';
	 ALTER DATABASE postgres SET lock_timeout = '10ms'");
for my $call ("CALL partition_move('items_0', 'a')", "CALL partition_move('items_3', 'a')",
	"CALL partition_move('items_0', NULL)", "CALL partition_move('items_3', NULL)")
{
	my $err = result_or_error($coordinator, 'postgres', $call);
	unlike($err, qr/ERROR/, "short timeouts of server a's database: $call") or diag($err);
}
is(on($coordinator, $same) . ' ' . on($coordinator, "SELECT count(*) FROM partition_placement WHERE server IS NOT NULL AND partition::text LIKE 'items\\_%'"),
	'0 0', "short timeouts of server a's database: the table holds what it held, every partition here");
# (and a resharding with shard_views: rows leave the shard there, then enter it)
for my $call ("CALL reshard_add_partition('sharded', 'sharded_1', shard_views => true)",
	"CALL reshard_remove_partition('sharded', 'sharded_1', shard_views => true)")
{
	my $err = result_or_error($coordinator, 'postgres', $call);
	unlike($err, qr/ERROR/, "short timeouts of server a's database: $call") or diag($err);
}
is(on($coordinator, "SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || sum(id) FROM sharded")
	  . ' ' . on_a("SELECT count(*) FROM sharded"),
	'2000 2000 2001000 2000', "short timeouts of server a's database: the sharded table holds what it held");
on($server, "ALTER DATABASE postgres RESET ALL");

# A schema whose name needs quoting, here and on server a.
on_a('CREATE SCHEMA "Up Per"');
on($coordinator,
	"CREATE SCHEMA \"Up Per\";
	 CREATE TABLE \"Up Per\".\"Some Items\" (id bigint NOT NULL, v text) PARTITION BY HASH (id jumpbackhash2_int8_ops);
	 CREATE TABLE \"Up Per\".\"Some Items 0\" PARTITION OF \"Up Per\".\"Some Items\" FOR VALUES WITH (MODULUS 2, REMAINDER 0);
	 CREATE TABLE \"Up Per\".\"Some Items 1\" PARTITION OF \"Up Per\".\"Some Items\" FOR VALUES WITH (MODULUS 2, REMAINDER 1);
	 INSERT INTO \"Up Per\".\"Some Items\" SELECT i, md5(i::text) FROM generate_series(1, 3000) AS i");
for my $target ("'a'", 'NULL')
{
	my $err = result_or_error($coordinator, 'postgres', "CALL partition_move('\"Up Per\".\"Some Items 1\"', $target)");
	unlike($err, qr/ERROR/, "a schema whose name needs quoting: moved to $target") or diag($err);
	is(on($coordinator, "SELECT count(*) || ' ' || sum(id) FROM \"Up Per\".\"Some Items\"")
		  . ' ' . on($coordinator, "SELECT coalesce(server, 'here') FROM partition_placement
		                            WHERE partition = '\"Up Per\".\"Some Items 1\"'::regclass"),
		'3000 4501500 ' . ($target eq 'NULL' ? 'here' : 'a'),
		"a schema whose name needs quoting: the table holds what it held after the move to $target");
}
# (and resharded with shard_views while its other partition is on server a:
# rows enter its shard there, then leave it)
for my $call ("CALL partition_move('\"Up Per\".\"Some Items 0\"', 'a')",
	"CALL reshard_remove_partition('\"Up Per\".\"Some Items\"', '\"Up Per\".\"Some Items 1\"', shard_views => true)",
	"CALL reshard_add_partition('\"Up Per\".\"Some Items\"', '\"Up Per\".\"Some Items 1\"', shard_views => true)",
	"CALL partition_move('\"Up Per\".\"Some Items 0\"', NULL)")
{
	my $err = result_or_error($coordinator, 'postgres', $call);
	unlike($err, qr/ERROR/, "a schema whose name needs quoting: $call") or diag($err);
}
is(on($coordinator, "SELECT count(*) || ' ' || sum(id) FROM \"Up Per\".\"Some Items\"")
	  . ' ' . on($coordinator, "SELECT count(*) FROM partition_placement WHERE server IS NOT NULL AND partition::text LIKE '\"Up Per\".%'"),
	'3000 4501500 0', 'a schema whose name needs quoting: the table holds what it held after the reshardings, every partition here');
is(on($coordinator, $ENGINE_LEFTOVERS) . ' ' . on_a($ENGINE_LEFTOVERS), 'none none',
	'nothing of the engine left here or there');

done_testing();
