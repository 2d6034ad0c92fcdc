# test/t/013_reshard_shard_views.pl
#	reshard_add_partition(..., shard_views => true): the rows that leave the
#	postgres_fdw shards are hidden there at the cutover and deleted after it
#	(docs/resharding.md, "Shards: hiding the rows that leave").
#
#	A coordinator and four shard servers (shard_table of SubsettingTest.pm):
#	items (id bigint, v text, c int) PARTITION BY LIST (jumpbackhash(id, 3)),
#	items_b a foreign table on shard b, 20,000 rows; items_3 on shard 3 is
#	added.  The table and its foreign tables belong to alice, who is not a
#	superuser; on the shards alice owns the tables, and she and bob log in
#	with a password (scram-sha-256), which dblink and postgres_fdw ask of a
#	user that is not a superuser; each has a user mapping with it on the
#	coordinator.  The coordinator has dblink.
#
#	A. alice may not create in the schema of shard 1's table: the call
#	   fails naming what it may not do, and leaves the table as it was and
#	   nothing of the engine on any server; the foreign tables' options are
#	   the same.
#	B. A call cancelled in its copy (the watcher cut_at): undone; nothing
#	   left anywhere, the options the same.
#	C. A superuser calls it on alice's table (it runs as alice: her user
#	   mappings, on the coordinator and through dblink) while two writers
#	   write through the parent, one as the superuser and one as bob (his
#	   own user mapping: the shards' views and the hidden keys must be his
#	   to use), each transaction the same write to a plain mirror table:
#	   inserts, updates and deletes of random keys; the call's session has
#	   extra_float_digits = -15, default_transaction_isolation =
#	   serializable, search_path = pg_catalog, public, lock_timeout = 1ms.
#	   Meanwhile a write made directly on shard 1's table (one that
#	   changes nothing) fails (object_in_use, naming the table).
#	   A role spy may create in the schema of the table on the coordinator
#	   and on shard 0, and the default privileges of alice's there grant it
#	   everything on her tables and functions.  Before the call it takes,
#	   on both, every name the engine used to give its objects (computed
#	   from the foreign partitions' OIDs: reshard_hidden_o, with a key that
#	   stays there, reshard_all_o, reshard_shown_o, reshard_incoming_o,
#	   reshard_mark_o(), reshard_refuse_direct_o()).  While the call is in
#	   its catch-up, spy has no privilege on what the engine made on
#	   either, and cannot read the hidden keys; nor has peek, a role
#	   without default privileges, to which an event trigger of the DBA's
#	   on both grants the columns of every table, view and foreign table
#	   made.  After it, what spy made is as it was,
#	   and is dropped.  Then: the call returns how many
#	   rows moved; the table equals its
#	   mirror (EXCEPT ALL both ways), no key twice; each shard, asked
#	   directly, holds only rows of its bucket and all together as many as
#	   the mirror (a row hidden but not deleted would show); reshard_check
#	   finds no misplaced row; the foreign tables of the old shards have the
#	   options they had; nothing of the engine is left on any server; the
#	   state is done with no error; a direct write on a shard works again.
#	   With a row of bucket 3 put on shard 0 by hand (the key of a row of
#	   shard 3), removing items_3 with shard_views is refused (rows entering
#	   shard 0 are found by their key) and that row is left.
#	D. The same as C with reshard_remove_partition(..., shard_views => true) of
#	   items_3: the rows that enter shards 0 to 2 are written there,
#	   hidden, before the cutover; shard 3 is left empty.
#	E. Adding again, shard 2's server stopped (immediate) once the call is
#	   in its copy: whatever the call did, once the server is back,
#	   reshard_abort ends it; the table equals its mirror, each shard holds
#	   only rows of its bucket in the layout it ended with and together the
#	   mirror's rows, nothing is left.
#	F. Without shard_views (its default, NULL: where the shards allow it),
#	   as alice: every shard allows it, so the call uses it and says
#	   nothing; with CREATE on shard 1's schema revoked, the call goes on
#	   without it and a NOTICE names what shard 1 does not allow.  Both
#	   done, the table equal to its mirror, nothing left.
#	Nothing checked depends on timing: the call goes on while the checks
#	made during it run, and one that finds the call ended (what it checks
#	gone) is reported as skipped.
#
# suite: shard views
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest qw(:DEFAULT start_sql finish_sql);

my $ROWS = 20000;
my $coordinator = new_server('coordinator');
my @shards = map { new_server("shard$_") } 0 .. 3;
my @servers = ($coordinator, @shards);

# --- Set-up.
shard_table($coordinator, \@shards, 'items', 'id bigint NOT NULL, v text NOT NULL, c int NOT NULL', 3);
for my $node (@servers)
{
	on($node, "CREATE ROLE alice LOGIN PASSWORD 'alice secret'; CREATE ROLE bob LOGIN PASSWORD 'bob secret';
	           CREATE ROLE spy");
	password_logins($node, 'alice,bob');
}
for my $s (0 .. 3)
{
	on($shards[$s], 'ALTER TABLE items OWNER TO alice; GRANT SELECT, INSERT, UPDATE, DELETE ON items TO bob');
	on($shards[$s], 'GRANT CREATE ON SCHEMA public TO alice') if $s != 1;
	on($coordinator, "CREATE USER MAPPING FOR alice SERVER shard_$s OPTIONS (user 'alice', password 'alice secret');
	                  CREATE USER MAPPING FOR bob SERVER shard_$s OPTIONS (user 'bob', password 'bob secret');
	                  GRANT USAGE ON FOREIGN SERVER shard_$s TO alice");
}
on($coordinator, qq{
CREATE EXTENSION dblink;
GRANT CREATE ON SCHEMA public TO alice;
INSERT INTO items SELECT i, 'v' || i, 0 FROM generate_series(1, $ROWS) AS i;
CREATE TABLE items_mirror (id bigint PRIMARY KEY, v text NOT NULL, c int NOT NULL);
INSERT INTO items_mirror SELECT i, 'v' || i, 0 FROM generate_series(1, $ROWS) AS i;
CREATE SEQUENCE item_ids START @{[ $ROWS + 1 ]};
ALTER TABLE items OWNER TO alice;
ALTER FOREIGN TABLE items_0 OWNER TO alice;
ALTER FOREIGN TABLE items_1 OWNER TO alice;
ALTER FOREIGN TABLE items_2 OWNER TO alice;
ALTER FOREIGN TABLE items_3 OWNER TO alice;
GRANT SELECT, INSERT, UPDATE, DELETE ON items, items_mirror TO bob;
GRANT USAGE, SELECT ON SEQUENCE item_ids TO bob;
});
on($coordinator, $CUT_AT);

my $options = q{SELECT string_agg(ftrelid::regclass || ' ' || ftoptions::text, ', ' ORDER BY ftrelid::regclass::text)
                FROM pg_foreign_table};
my $options_before = on($coordinator, $options);
my $call = "CALL reshard_add_partition('items', 'items_3', shard_views => true)";

# What of the engine is left on each server (none), and the options.
sub nothing_left
{
	my ($name) = @_;
	for my $i (0 .. $#servers)
	{
		is(on($servers[$i], $ENGINE_LEFTOVERS), 'none',
			"$name: nothing of the engine is left on " . $servers[$i]->name);
	}
	is(on($coordinator, $options), $options_before, "$name: the foreign tables have the options they had");
	return;
}

sub same_as_mirror
{
	my ($name) = @_;
	is( on($coordinator,
			q{SELECT (SELECT count(*) FROM (SELECT * FROM items EXCEPT ALL SELECT * FROM items_mirror) AS a)
			       + (SELECT count(*) FROM (SELECT * FROM items_mirror EXCEPT ALL SELECT * FROM items) AS b)}),
		'0', "$name: the table equals its mirror")
	  or diag(on($coordinator,
			q{SELECT 'only in items: ' || coalesce(string_agg(format('%s %s %s (bucket %s)', id, v, c, tableoid::regclass), '; '), '-')
			  FROM (SELECT tableoid, * FROM items WHERE (id, v, c) NOT IN (SELECT id, v, c FROM items_mirror)) AS a
			  UNION ALL
			  SELECT 'only in the mirror: ' || coalesce(string_agg(format('%s %s %s (bucket %s of 3, %s of 4)', id, v, c,
			                                                   jumpbackhash(id, 3), jumpbackhash(id, 4)), '; '), '-')
			  FROM (SELECT * FROM items_mirror WHERE (id, v, c) NOT IN (SELECT id, v, c FROM items)) AS b}));
	return;
}

# --- A. No right to create on shard 1.
my ($ret, $out, $err) = $coordinator->psql('postgres', "SET ROLE alice; $call");
like($err, qr/permission denied for schema public/, 'A: alice may not create on shard 1: the call fails, saying so');
note $err;
is(on($coordinator, "SELECT phase FROM reshard_progress"), 'aborted', 'A: the resharding is undone');
is(on($coordinator, "SELECT count(*) FROM sharding_layout('items')"), '3', 'A: the layout is the old one');
same_as_mirror('A');
nothing_left('A');
on($shards[1], 'GRANT CREATE ON SCHEMA public TO alice');

# --- B. Cancelled in its copy.
my $engine = start_sql($coordinator, [ 'INSERT INTO engine_calls VALUES (1, pg_backend_pid())', 'SET ROLE alice', $call ]);
my $cut = on($coordinator, "SELECT cut_at('public.items', 1, 'copy', 'cancel')");
($out, $err) = finish_sql($engine);
note "B: cut at $cut: $err";
SKIP:
{
	skip 'B: the call ended before the watcher cut it', 1 unless $cut =~ /^[^|]+\|\d+/;
	like($err, qr/canceling statement due to user request/, 'B: the call was cancelled');
}
is(on($coordinator, "SELECT phase || ' ' || coalesce(error, '') FROM reshard_progress"),
	$cut =~ /^[^|]+\|\d+/ ? 'aborted canceling statement due to user request' : 'done ',
	'B: the resharding is undone');
if ($cut !~ /^[^|]+\|\d+/)
{
	BAIL_OUT('B: the call was not cut short: the rest assumes the old layout');
}
same_as_mirror('B');
nothing_left('B');

# --- C and D. As a superuser on alice's table, under writers as the
# superuser and as bob: items_3 added, then removed.
# (An id to update or delete is picked among the mirror's: the statement's
# snapshot here is taken before the one postgres_fdw takes on a shard, so
# that an id inserted meanwhile could be changed there while its mirror row
# is not yet seen here, a difference of postgres_fdw's, not the engine's; a
# mirror row seen here was committed on its shard first.)
my $pick = q{(SELECT m.id FROM items_mirror AS m
              WHERE m.id = (SELECT floor(random() * (SELECT last_value FROM item_ids))::bigint))};
my %writes = (
	insert => q{WITH n AS (SELECT nextval('item_ids') AS id),
	                 a AS (INSERT INTO items SELECT id, 'new', 0 FROM n RETURNING id)
	            INSERT INTO items_mirror SELECT id, 'new', 0 FROM a},
	update => qq{WITH u AS (UPDATE items SET c = c + 1, v = 'updated' WHERE id = $pick RETURNING id)
	             UPDATE items_mirror m SET c = c + 1, v = 'updated' FROM u WHERE m.id = u.id},
	delete => qq{WITH d AS (DELETE FROM items WHERE id = $pick RETURNING id)
	             DELETE FROM items_mirror m USING d WHERE m.id = d.id});

# under_writers(NAME, RUN, CALL, BUCKETS[, DURING, AFTER]): CALL under the
# writers, a direct write on shard 1 in its catch-up (and DURING, code, if
# given); then AFTER, if given, and the checks, BUCKETS the new count.
sub under_writers
{
	my ($name, $run, $call, $buckets, $during, $after) = @_;
	my $last = on($coordinator, 'SELECT last_value FROM item_ids');
	start_writer_loops($coordinator,
		map { ($_ => $writes{$_}, "bob_$_" => "SET ROLE bob; $writes{$_}") } sort keys %writes);
	# the writers have committed before the call
	wait_until($coordinator, "SELECT last_value > $last + 10 FROM item_ids", 'the writers to insert 10 rows');
	# (in a session whose settings the engine must not depend on)
	my $settings = "SET extra_float_digits = -15; SET default_transaction_isolation = 'serializable';"
	  . " SET search_path = pg_catalog, public; SET lock_timeout = '1ms'";
	my $engine = start_sql($coordinator, [ "INSERT INTO engine_calls VALUES ($run, pg_backend_pid())", $settings, $call ]);
	my $cut = on($coordinator, "SELECT cut_at('public.items', $run, 'catch up', 'none')");
	note "$name: the call is in $cut";
	# (an update that changes nothing: if the call ended first, it went
	# through and the table still equals its mirror)
	my $direct =
	  result_or_error($shards[1], 'postgres', 'UPDATE items SET c = c WHERE id = (SELECT min(id) FROM items)');
	my $phase_after = on($coordinator, 'SELECT phase FROM reshard_progress');
	$during->($cut) if $during;
	my ($out, $err) = finish_sql($engine);
	# (with the default budget and attempts, under the writers: on a busy
	# machine they can run out, and the call is made again, in a session of
	# the same settings, at most 5 times: call_until_done)
	if (ran_out_of_attempts($err, 'public.items'))
	{
		note "$name: the call ran out of attempts: $err";
		my ($ret, $calls);
		($ret, $out, $err, $calls) = call_until_done($coordinator, "$settings; $call", 'public.items');
		note "$name: called again, $calls calls";
	}
	$after->() if $after;
	like($out, qr/^\d+$/, "$name: the call returns the rows moved ($out)");
	is($err, '', "$name: no error or warning");
  SKIP:
	{
		skip "$name: the call ended before the direct write", 1
		  unless $cut =~ /^[^|]+\|\d+/ && ($direct ne '' || $phase_after !~ /^(finish|done)$/);
		like($direct, qr/cannot write to items directly while it is resharded/,
			"$name: a direct write on a shard during the call fails");
	}
	stop_writer_loops(sub { });
	for my $writer (map { ($_, "bob_$_") } sort keys %writes)
	{
		my $log = "$PostgreSQL::Test::Utils::log_path/writer_$writer.log";
		note "$name: writer $writer: " . (-s $log ? slurp_file($log) : 'no error');
	}
	is(on($coordinator, "SELECT phase || ' ' || coalesce(error, '') FROM reshard_progress"), 'done ',
		"$name: done, no error");
	same_as_mirror($name);
	is(on($coordinator, 'SELECT count(*) - count(DISTINCT id) FROM items'), '0', "$name: no key twice");
	is(on($coordinator, "SELECT coalesce(sum(misplaced_rows), 0) FROM reshard_check('items')"), '0',
		"$name: reshard_check finds no misplaced row");
	my $on_shards = 0;
	for my $s (0 .. 3)
	{
		is( on($shards[$s],
				$s < $buckets
				? "SELECT count(*) FROM items WHERE jumpbackhash(id, $buckets) <> $s"
				: 'SELECT count(*) FROM items'),
			'0',
			"$name: shard $s holds " . ($s < $buckets ? "only rows of bucket $s" : 'no row'));
		$on_shards += on($shards[$s], 'SELECT count(*) FROM items');
	}
	is($on_shards, on($coordinator, 'SELECT count(*) FROM items_mirror'),
		"$name: the shards hold the mirror's rows, no more");
	nothing_left($name);
	is(result_or_error($shards[1], 'postgres', 'UPDATE items SET c = c WHERE id = (SELECT min(id) FROM items)'),
		'', "$name: direct writes work again");
	return;
}

# spy: CREATE in the schema, and alice's default privileges give it all on
# her new tables and functions, on the coordinator and on shard 0; peek:
# the columns of every table, view and foreign table made there, which an
# event trigger grants it.
for my $node ($coordinator, $shards[0])
{
	on($node, 'GRANT CREATE ON SCHEMA public TO spy;
	           ALTER DEFAULT PRIVILEGES FOR ROLE alice IN SCHEMA public GRANT ALL ON TABLES TO spy;
	           ALTER DEFAULT PRIVILEGES FOR ROLE alice IN SCHEMA public GRANT ALL ON FUNCTIONS TO spy');
	grant_columns_of_new_tables($node, 'peek');
}
my @foreign = split /\n/, on($coordinator, "SELECT oid FROM pg_class WHERE relname IN ('items_0', 'items_1', 'items_2')");
my $items_0 = on($coordinator, "SELECT 'items_0'::regclass::oid");
# a key that stays on shard 0 (a list of hidden keys that held it would
# make the call delete its row after the cutover: the mirror would differ)
my $staying = on($shards[0], 'SELECT max(id) FROM items WHERE jumpbackhash(id, 4) = 0');

# What spy made (tables, functions, their names), and what else has one of
# those names ('none').
my $SPY_MADE = q{
	SELECT (SELECT count(*) FROM pg_class WHERE relowner = 'spy'::regrole AND relkind = 'r'
	          AND relname ~ '^reshard_[a-z_]+_[0-9]+$')
	       || ' tables, '
	       || (SELECT count(*) FROM pg_proc WHERE proowner = 'spy'::regrole AND proname ~ '^reshard_[a-z_]+_[0-9]+$')
	       || ' functions; others: '
	       || coalesce((SELECT string_agg(x, ', ' ORDER BY x) FROM (
	              SELECT format('%s of %s', relname, relowner::regrole) AS x FROM pg_class
	              WHERE relname ~ '^_?reshard_[a-z_]+_[0-9]+$' AND relowner <> 'spy'::regrole
	              UNION ALL SELECT format('function %s of %s', proname, proowner::regrole) FROM pg_proc
	              WHERE proname ~ '^reshard_[a-z_]+_[0-9]+$' AND proowner <> 'spy'::regrole) AS t), 'none')};

# squat(NAME): spy takes the names of before, on the coordinator and on shard 0.
sub squat
{
	my ($name) = @_;
	for my $o (@foreign)
	{
		on($coordinator, "SET ROLE spy; CREATE TABLE reshard_hidden_$o (key bigint); CREATE TABLE reshard_incoming_$o ()");
		on($shards[0], "SET ROLE spy; CREATE TABLE reshard_hidden_$o (key bigint);
		                CREATE TABLE reshard_all_$o (); CREATE TABLE reshard_shown_$o (); CREATE TABLE reshard_incoming_$o ();
		                CREATE FUNCTION reshard_mark_$o() RETURNS boolean LANGUAGE sql AS 'SELECT true';
		                CREATE FUNCTION reshard_refuse_direct_$o() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END'");
	}
	on($shards[0], "INSERT INTO reshard_hidden_$items_0 VALUES ($staying)");
	return;
}

# spy_refused(NAME, CUT): while the call is in its catch-up, spy has no
# privilege on what the engine made (here and on shard 0), nor has peek, and
# spy cannot read the hidden keys.
sub spy_refused
{
	my ($name, $cut) = @_;
	my $privileges = q{
		SELECT count(*) || ' made; ' || coalesce(string_agg(x, ', ' ORDER BY x) FILTER (WHERE x IS NOT NULL), 'none') FROM (
		    SELECT CASE WHEN has_table_privilege('spy', c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
		                  OR EXISTS (SELECT FROM aclexplode(c.relacl) AS a WHERE a.grantee = 'spy'::regrole)
		                  OR has_any_column_privilege('spy', c.oid, 'SELECT, INSERT, UPDATE, REFERENCES')
		                  OR has_any_column_privilege('peek', c.oid, 'SELECT, INSERT, UPDATE, REFERENCES')
		                THEN c.relname::text END AS x
		    FROM pg_class c WHERE c.relname LIKE 'reshard\_%' AND c.relowner = 'alice'::regrole AND c.relkind <> 'i'
		    UNION ALL
		    SELECT CASE WHEN has_function_privilege('spy', p.oid, 'EXECUTE') THEN p.proname::text END
		    FROM pg_proc p WHERE p.proname LIKE 'reshard\_%' AND p.proowner = 'alice'::regrole) AS t};
	# (the call goes on meanwhile: what it dropped before a check is
	# reported, not checked)
	for my $node ($coordinator, $shards[0])
	{
		my $seen = on($node, $privileges);
	  SKIP:
		{
			skip "$name: the call ended before the watcher stopped it", 1 unless $cut =~ /^[^|]+\|\d+/;
			skip "$name: the call had dropped what it made on " . $node->name . " before it was checked", 1
			  if $seen =~ /^0 made/;
			like($seen, qr/^[1-9]\d* made; none$/,
				"$name: spy may use nothing the engine made on " . $node->name);
		}
	}
	my $hidden = on($shards[0],
		q{SELECT oid::regclass FROM pg_class WHERE relname LIKE 'reshard\_hidden\_%' AND relowner = 'alice'::regrole
		  AND relkind = 'r'});
	my $read = $hidden eq '' ? '' : result_or_error($shards[0], 'postgres', "SET ROLE spy; SELECT count(*) FROM $hidden");
  SKIP:
	{
		skip "$name: the call had dropped the hidden keys before they were read", 1
		  if $hidden eq '' || $read =~ /relation "reshard_hidden_\w+" does not exist/;
		like($read, qr/permission denied for table reshard_hidden_/, "$name: spy cannot read the hidden keys on shard 0");
	}
	return;
}

# spy_untouched(NAME): what spy made is as it was; then dropped.
sub spy_untouched
{
	my ($name) = @_;
	for my $node ($coordinator, $shards[0])
	{
		is(on($node, $SPY_MADE), $node == $coordinator ? '6 tables, 0 functions; others: none' : '12 tables, 6 functions; others: none',
			"$name: the names spy took are still its own on " . $node->name);
		on($node, q{DO $$
			DECLARE r record;
			BEGIN
			    FOR r IN SELECT oid::regclass AS t FROM pg_class WHERE relowner = 'spy'::regrole AND relkind = 'r' LOOP
			        EXECUTE format('DROP TABLE %s', r.t);
			    END LOOP;
			    FOR r IN SELECT oid::regprocedure AS f FROM pg_proc WHERE proowner = 'spy'::regrole LOOP
			        EXECUTE format('DROP FUNCTION %s', r.f);
			    END LOOP;
			END $$});
	}
	return;
}

squat('C');
is(on($shards[0], "SELECT string_agg(key::text, ',') FROM reshard_hidden_$items_0"), $staying,
	'C: spy took the old names, with a list of hidden keys on shard 0 that holds a key that stays');
under_writers('C', 2, $call, 4, sub { spy_refused('C', @_) },
	sub {
		is(on($shards[0], "SELECT string_agg(key::text, ',') FROM reshard_hidden_$items_0"), $staying,
			"C: spy's list of hidden keys is as it was");
		spy_untouched('C');
	});
my $remove = "CALL reshard_remove_partition('items', 'items_3', shard_views => true)";

# A row of bucket 3 on shard 0, with the key of a row that moves there from
# shard 3: not taken for a copy (nor deleted by the undo).
# (If C failed, shard 3 holds no such row: reported, and the rest goes on.)
my $key = on($shards[3], 'SELECT min(id) FROM items WHERE jumpbackhash(id, 3) = 0');
SKIP:
{
	isnt($key, '', 'shard 3 holds a row that moves to shard 0 when items_3 is removed')
	  or skip 'no row of shard 3 to plant on shard 0 (C did not add items_3)', 2;
	on($shards[0], "INSERT INTO items VALUES ($key, 'misplaced', 0)");
	($ret, $out, $err) = $coordinator->psql('postgres', $remove);
	like($err, qr/foreign partition public.items_0 of public.items holds 1 rows of other buckets/,
		'a row of another bucket on a shard that rows enter: refused');
	is(on($shards[0], "SELECT v FROM items WHERE id = $key"), 'misplaced', 'that row is left as it was');
	on($shards[0], "DELETE FROM items WHERE id = $key");
}
nothing_left('refused');

squat('D');
under_writers('D', 3, $remove, 3, sub { spy_refused('D', @_) }, sub { spy_untouched('D') });

# --- E. A shard's server stops in the middle of a call: the call fails;
# once the server is back, reshard_abort undoes it (or finishes it, if it
# had cut over).  Wherever the stop lands, nothing is lost or left.
my $engine_e = start_sql($coordinator, [ 'INSERT INTO engine_calls VALUES (4, pg_backend_pid())', $call ]);
$cut = on($coordinator, "SELECT cut_at('public.items', 4, 'copy', 'none')");
$shards[2]->stop('immediate');
($out, $err) = finish_sql($engine_e);
note "E: shard 2 stopped in $cut; the call said: $err";
$shards[2]->start;
my $phase = on($coordinator, 'SELECT phase FROM reshard_progress');
if ($phase ne 'done' && $phase ne 'aborted')
{
	($ret, $out, $err) = $coordinator->psql('postgres', "CALL reshard_abort('items')");
	is($ret, 0, "E: reshard_abort ends the resharding left in phase $phase") or diag($err);
}
like(on($coordinator, 'SELECT phase FROM reshard_progress'), qr/^(done|aborted)$/, 'E: done or undone');
same_as_mirror('E');
my $buckets = on($coordinator, "SELECT DISTINCT buckets FROM sharding_layout('items')");
my $on_shards_e = 0;
for my $s (0 .. 3)
{
	is( on($shards[$s],
			$s < $buckets ? "SELECT count(*) FROM items WHERE jumpbackhash(id, $buckets) <> $s" : 'SELECT count(*) FROM items'),
		'0', "E: shard $s holds " . ($s < $buckets ? "only rows of bucket $s" : 'no row'));
	$on_shards_e += on($shards[$s], 'SELECT count(*) FROM items');
}
is($on_shards_e, on($coordinator, 'SELECT count(*) FROM items_mirror'), "E: the shards hold the mirror's rows, no more");
nothing_left('E');

# --- F. shard_views by default (NULL): where the shards allow it.  alice
# calls without it, all allowed: the call uses it and says nothing; then
# with CREATE on shard 1's schema revoked: it goes on without it, and a
# NOTICE names what shard 1 does not allow.
for my $f (1, 2)
{
	$buckets = on($coordinator, "SELECT DISTINCT buckets FROM sharding_layout('items')");
	my $default_call = $buckets == 3 ? "CALL reshard_add_partition('items', 'items_3')" : "CALL reshard_remove_partition('items')";
	on($shards[1], 'REVOKE CREATE ON SCHEMA public FROM alice') if $f == 2;
	($ret, $out, $err) = $coordinator->psql('postgres', "SET ROLE alice; $default_call");
	is($ret, 0, "F$f: $default_call as alice, without shard_views, is done") or diag($err);
	if ($f == 1)
	{
		unlike($err, qr/without shard_views/, 'F1: every shard allows shard_views: no NOTICE');
	}
	else
	{
		like($err, qr/NOTICE:  resharding public\.items without shard_views: on server "shard_1", alice may not create in the schema of public\.items there\n/,
			'F2: CREATE on shard 1 revoked: a NOTICE names it');
	}
	is(on($coordinator, "SELECT shard_views || ' ' || phase FROM reshard_state WHERE parent = 'items'::regclass"),
		($f == 1 ? 'true' : 'false') . ' done', "F$f: the call " . ($f == 1 ? 'used' : 'did without') . ' shard_views');
	same_as_mirror("F$f");
	nothing_left("F$f");
}
on($shards[1], 'GRANT CREATE ON SCHEMA public TO alice');

done_testing();
