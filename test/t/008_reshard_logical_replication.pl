# test/t/008_reshard_logical_replication.pl
#	Logical replication of a table resharded by the 1.2 engine
#	(reshard_engine_run): its subscribers lose nothing.
#
#	A publisher (wal_level = logical) has a table partitioned BY HASH with
#	the jumpbackhash operator classes, four local partitions, 20,000 rows
#	and a primary key, published FOR TABLE with publish_via_partition_root.
#	A subscriber subscribes to it twice: into an ordinary table of the same
#	name, and (in another database) into a table partitioned differently
#	(built-in HASH, three partitions).  Two writers write through the
#	parent (INSERT, UPDATE of another column, DELETE, key-changing UPDATE,
#	updates and deletes of the rows they inserted) from before the call
#	starts to after it ends, while the engine adds a fifth partition, and
#	again while it removes it; after each resharding, more writes update,
#	delete and re-key rows the resharding moved.  After each, once the
#	subscriptions caught up: every subscriber's table equals the
#	publisher's (row count and md5 of all rows in key order), the engine
#	left nothing behind, the table is still in its publication, the
#	subscriptions' apply workers run and the subscriber logged no error.
#
#	A table published through its partitions (publications without
#	publish_via_partition_root, or of some of its partitions only) would
#	send the partitions' changes under their own names: the rows the engine
#	moves would not reach the subscribers.  So would a publication of the
#	tables the engine fills or empties, through the root or not (FOR ALL
#	TABLES, FOR TABLES IN SCHEMA of the table's schema or the extension's,
#	FOR TABLE the new or removed partition): its subscribers would receive
#	the copies under the engine's table names, and fail.  The engine
#	refuses both before it copies anything (reshard_catalog_check): each kind
#	of publication makes the call fail with feature_not_supported, naming
#	the publications, with what fixes it as hint, and leaves the table as it
#	was and nothing of the engine's.  The same check at the cutover: a
#	publication changed to publish_via_partition_root = false during a
#	resharding stops it there (undone by reshard_abort).  Published through
#	its root, the same table is resharded.
#
# suite: logical replication
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $ROWS = 20000;
my $WRITERS = 2;

my $publisher = new_server("publisher", "wal_level = logical\nmax_wal_senders = 10\nmax_replication_slots = 10\n");
my $subscriber = new_server('subscriber');

# attempt(NODE, SQL[, DATABASE]): runs SQL, returns (stdout, stderr) whether
# it fails or not; stderr says so if it did not end in time.
sub attempt
{
	my ($node, $sql, $db) = @_;
	my ($out, $err, $timed_out);
	$node->psql($db // 'postgres', $sql, stdout => \$out, stderr => \$err,
		timeout => $PostgreSQL::Test::Utils::timeout_default, timed_out => \$timed_out);
	$err .= timed_out("the end of: $sql") if $timed_out;
	return ($out, $err);
}

# The whole contents of a table: its row count and the md5 of its rows in
# key order.
sub contents_sql
{
	my ($table) = @_;
	return "SELECT count(*) || ' rows, md5 ' || coalesce(md5(string_agg(format('%s|%s|%s', id, v, n), ',' ORDER BY id)), '-')"
	  . " FROM $table";
}

# What of the engine is left: tables, triggers and constraints named reshard_*.
my $leftovers = q{
SELECT coalesce(string_agg(x, ', ' ORDER BY x), 'none') FROM (
    SELECT relname::text AS x FROM pg_class
    WHERE relname LIKE 'reshard\_%' AND relname NOT LIKE 'reshard\_state%' AND relname <> 'reshard_progress'
    UNION ALL SELECT tgname FROM pg_trigger WHERE tgname LIKE 'reshard\_%'
    UNION ALL SELECT conname FROM pg_constraint
    WHERE conname LIKE 'reshard\_%' AND conrelid <> 'reshard_state'::regclass) AS t};

# The publisher: the table, its publication, the writers' procedure.
on($publisher, qq{
CREATE EXTENSION subsetting;
CREATE TABLE items (id bigint PRIMARY KEY, v text NOT NULL, n int NOT NULL)
    PARTITION BY HASH (id jumpbackhash4_int8_ops);
SELECT format('CREATE TABLE items_%s PARTITION OF items FOR VALUES WITH (MODULUS 4, REMAINDER %s)', b, b)
FROM generate_series(0, 3) AS b \\gexec
INSERT INTO items SELECT i, 'v' || i, 0 FROM generate_series(1, $ROWS) AS i;
CREATE TABLE items_4 (LIKE items INCLUDING ALL);
CREATE PUBLICATION pub_root FOR TABLE items WITH (publish_via_partition_root = true);

CREATE TABLE load_control (stop boolean NOT NULL);
INSERT INTO load_control VALUES (false);
CREATE TABLE writer_rounds (w int PRIMARY KEY, rounds int NOT NULL);
-- Writer w of writers, through the parent, until load_control.stop, in
-- rounds of: an insert (keys base + ...), an update of another column, a
-- delete and a key-changing update (+ shift) of rows of the initial $ROWS,
-- an update and a delete of rows it inserted; each statement a
-- transaction of its own, 10 ms of rest after each round.  The writers'
-- keys are disjoint (id modulo writers).
CREATE PROCEDURE write_load(w int, writers int, base bigint, shift bigint) LANGUAGE plpgsql AS \$\$
DECLARE
    k int := 0;
    a bigint;
BEGIN
    LOOP
        k := k + 1;
        a := (k * 3 * writers + w) % $ROWS + 1;
        INSERT INTO items VALUES (base + k * writers + w, 'new', k);
        COMMIT;
        UPDATE items SET n = n + 1 WHERE id = a;
        COMMIT;
        DELETE FROM items WHERE id = a + writers;
        COMMIT;
        UPDATE items SET id = id + shift WHERE id = a + 2 * writers;
        COMMIT;
        UPDATE items SET v = v || '+', n = n + 1 WHERE id = base + (k - 1) * writers + w;
        COMMIT;
        IF k % 3 = 0 THEN
            DELETE FROM items WHERE id = base + (k - 2) * writers + w;
            COMMIT;
        END IF;
        UPDATE writer_rounds SET rounds = k WHERE writer_rounds.w = write_load.w;
        COMMIT;
        EXIT WHEN (SELECT stop FROM load_control);
        PERFORM pg_sleep(0.01);
    END LOOP;
END
\$\$;
});

# The subscriber: an ordinary table, and a table partitioned otherwise.
on($subscriber, "CREATE DATABASE other");
my $connection = $publisher->connstr . ' dbname=postgres';
on($subscriber, qq{
CREATE TABLE items (id bigint PRIMARY KEY, v text NOT NULL, n int NOT NULL);
CREATE SUBSCRIPTION sub_plain CONNECTION '$connection' PUBLICATION pub_root;
});
on($subscriber, qq{
CREATE TABLE items (id bigint PRIMARY KEY, v text NOT NULL, n int NOT NULL) PARTITION BY HASH (id);
CREATE TABLE items_a PARTITION OF items FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE items_b PARTITION OF items FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE items_c PARTITION OF items FOR VALUES WITH (MODULUS 3, REMAINDER 2);
CREATE SUBSCRIPTION sub_hashed CONNECTION '$connection' PUBLICATION pub_root;
}, 'other');
$subscriber->wait_for_subscription_sync($publisher, 'sub_plain', 'postgres');
$subscriber->wait_for_subscription_sync($publisher, 'sub_hashed', 'other');

# Both subscribers' tables equal the publisher's (after they caught up).
sub subscribers_match
{
	my ($when) = @_;
	$publisher->wait_for_catchup('sub_plain');
	$publisher->wait_for_catchup('sub_hashed');
	my $expected = on($publisher, contents_sql('items'));
	is(on($subscriber, contents_sql('items')), $expected, "$when: the ordinary table of the subscriber equals the publisher's");
	is(on($subscriber, contents_sql('items'), 'other'),
		$expected, "$when: the differently partitioned table of the subscriber equals the publisher's");
}

subscribers_match('after the initial synchronization');
like(on($publisher, contents_sql('items')), qr/^$ROWS rows/, "the publisher has $ROWS rows");

# reshard(OPERATION, PARTITION, BASE, SHIFT): the resharding with the
# writers running from before the call until after it.
sub reshard
{
	my ($operation, $partition, $base, $shift) = @_;
	on($publisher, "UPDATE load_control SET stop = false; DELETE FROM writer_rounds;"
		  . " INSERT INTO writer_rounds SELECT w, 0 FROM generate_series(0, $WRITERS - 1) AS w");
	my @writers = map { start_sql($publisher, "CALL write_load($_, $WRITERS, $base, $shift)") } 0 .. $WRITERS - 1;
	# The call starts once every writer has committed a round.
	wait_until($publisher, "SELECT min(rounds) >= 1 FROM writer_rounds", "every writer to commit a round");
	my $before = on($publisher, "SELECT sum(rounds) FROM writer_rounds");
	my ($out, $err) = attempt($publisher,
		"SET client_min_messages = warning; CALL reshard_engine_run('items', '$operation', '$partition', '500 ms', 10)");
	my $during = on($publisher, "SELECT sum(rounds) FROM writer_rounds") - $before;
	on($publisher, "UPDATE load_control SET stop = true");
	my @writer_errors = map { (finish_sql($_))[1] } @writers;
	is($err, '', "CALL reshard_engine_run('items', '$operation', '$partition') succeeds with the writers running")
	  or die "the resharding failed, the rest would test nothing";
	is(join('', @writer_errors), '', "the writers wrote without an error");
	is(on($publisher, "SELECT phase || ' ' || coalesce(error, 'no error') FROM reshard_progress"),
		'done no error', "the resharding ($operation) is done, without an error");
	diag("$operation: writers' rounds during the call: $during, changes applied by the engine: "
		  . on($publisher, "SELECT changes_applied FROM reshard_progress"));
	is(on($publisher, $leftovers), 'none', "the engine left nothing behind ($operation)");
	is(on($publisher, "SELECT sum(misplaced_rows) FROM reshard_check('items')"), '0', "no row is misplaced ($operation)");
	is(on($publisher, "SELECT string_agg(schemaname || '.' || tablename, ', ') FROM pg_publication_tables WHERE pubname = 'pub_root'"),
		'public.items', "the table is still in its publication, alone ($operation)");
	return;
}

# Adding a fifth partition.
reshard('add', 'items_4', 1_000_000, 10_000_000);
is(on($publisher, "SELECT string_agg(inhrelid::regclass::text, ' ' ORDER BY inhrelid::regclass::text) FROM pg_inherits"
		  . " WHERE inhparent = 'items'::regclass"),
	'items_0 items_1 items_2 items_3 items_4', "the table has five partitions");
subscribers_match('after the add');

# write_moved(IDS, N, NOTE, KEY): through the parent, of the rows IDS (a
# query, ordered) selects, updates 300 (n + N, NOTE appended to v), deletes
# 200 and gives 100 new keys (id + KEY).
sub write_moved
{
	my ($ids, $n, $note, $key) = @_;
	return on($publisher, qq{
WITH u AS (UPDATE items SET n = n + $n, v = v || ' $note' WHERE id IN ($ids LIMIT 300) RETURNING 1),
     d AS (DELETE FROM items WHERE id IN ($ids OFFSET 300 LIMIT 200) RETURNING 1),
     k AS (UPDATE items SET id = id + $key WHERE id IN ($ids OFFSET 500 LIMIT 100) RETURNING 1)
SELECT (SELECT count(*) FROM u) || ' ' || (SELECT count(*) FROM d) || ' ' || (SELECT count(*) FROM k)});
}

# Later writes to rows the add moved into items_4: updates, deletes and
# key-changing updates, through the parent.
is(write_moved("SELECT id FROM items_4 WHERE id <= $ROWS ORDER BY id", 100, 'after add', 30000000),
	'300 200 100', "300 moved rows updated, 200 deleted, 100 given new keys after the add");
subscribers_match('after writes to the rows the add moved');

# Removing it again: its rows move back into the four others.
on($publisher, "CREATE TABLE moved_out AS SELECT id FROM items_4");
reshard('remove', 'items_4', 2_000_000, 20_000_000);
is(on($publisher, "SELECT string_agg(inhrelid::regclass::text, ' ' ORDER BY inhrelid::regclass::text) FROM pg_inherits"
		  . " WHERE inhparent = 'items'::regclass") . ' ' . on($publisher, "SELECT count(*) FROM items_4"),
	'items_0 items_1 items_2 items_3 0', "the table has four partitions, the removed one is empty");
subscribers_match('after the remove');

is(write_moved("SELECT id FROM items WHERE id IN (SELECT id FROM moved_out) ORDER BY id", 1000, 'after remove',
		40000000),
	'300 200 100', "300 rows moved back updated, 200 deleted, 100 given new keys after the remove");
subscribers_match('after writes to the rows the remove moved');

# The subscriptions still work: their apply workers run, their table is
# ready, the subscriber logged no error.
is(on($subscriber, "SELECT count(*) FROM pg_stat_subscription WHERE subname = 'sub_plain' AND relid IS NULL AND pid IS NOT NULL")
	  . ' ' . on($subscriber, "SELECT string_agg(srsubstate::text, ',') FROM pg_subscription_rel r JOIN pg_subscription s ON s.oid = r.srsubid WHERE s.subname = 'sub_plain'"),
	'1 r', "the apply worker of sub_plain runs, its table is ready");
is(on($subscriber, "SELECT count(*) FROM pg_stat_subscription WHERE subname = 'sub_hashed' AND relid IS NULL AND pid IS NOT NULL", 'other')
	  . ' ' . on($subscriber, "SELECT string_agg(srsubstate::text, ',') FROM pg_subscription_rel r JOIN pg_subscription s ON s.oid = r.srsubid WHERE s.subname = 'sub_hashed'", 'other'),
	'1 r', "the apply worker of sub_hashed runs, its table is ready");
my $subscriber_log = slurp_file($subscriber->logfile);
unlike($subscriber_log, qr/ERROR|does not exist/, "the subscriber logged no error");

# A table published through its partitions: refused before anything.
on($publisher, q{
CREATE SCHEMA parts;
CREATE TABLE parts.t2 (id bigint PRIMARY KEY, v text NOT NULL, n int NOT NULL) PARTITION BY HASH (id jumpbackhash4_int8_ops);
SELECT format('CREATE TABLE parts.t2_%s PARTITION OF parts.t2 FOR VALUES WITH (MODULUS 4, REMAINDER %s)', b, b)
FROM generate_series(0, 3) AS b \gexec
INSERT INTO parts.t2 SELECT i, 'v' || i, 0 FROM generate_series(1, 2000) AS i;
CREATE TABLE parts.t2_4 (LIKE parts.t2 INCLUDING ALL);
});
# What must not change: the layout, the rows, the new partition (empty, not attached).
my $t2_state = "SELECT pg_get_partkeydef('parts.t2'::regclass) || '; '"
  . " || (SELECT string_agg(inhrelid::regclass::text, ' ' ORDER BY inhrelid::regclass::text) FROM pg_inherits WHERE inhparent = 'parts.t2'::regclass)"
  . " || '; ' || (" . contents_sql('parts.t2') . ")"
  . " || '; new partition: ' || (SELECT count(*) FROM parts.t2_4) || ' rows, ' || (SELECT relispartition FROM pg_class WHERE oid = 'parts.t2_4'::regclass)";
my $t2_before = on($publisher, $t2_state);

# refused(PUBLICATIONS, OPERATION, PARTITION, MESSAGE, HINT, WHAT): with
# the publications made by PUBLICATIONS, the call fails with
# feature_not_supported, "cannot reshard parts.t2 while MESSAGE" and the
# hint HINT, and leaves everything as it was; the publications are dropped
# afterwards.
sub refused
{
	my ($publications, $operation, $partition, $message, $hint, $what) = @_;
	on($publisher, $publications);
	my ($out, $err) = attempt($publisher, "\\set VERBOSITY verbose\n"
		  . "CALL reshard_engine_run('parts.t2', '$operation', '$partition', '500 ms', 10)");
	like($err, qr/ERROR:  0A000: cannot reshard parts\.t2 while \Q$message\E\n/,
		"$what: refused (feature_not_supported), naming the publications");
	like($err, qr/HINT:  \Q$hint\E\n/, "$what: the hint says how to fix it");
	is(on($publisher, $t2_state), $t2_before, "$what: the table is as it was, the new partition untouched");
	is(on($publisher, $leftovers) . ', ' . on($publisher, "SELECT count(*) FROM reshard_state WHERE parent = 'parts.t2'::regclass"),
		'none, 0', "$what: nothing of the engine left, no resharding recorded");
	on($publisher, "SELECT format('DROP PUBLICATION %I', pubname) FROM pg_publication WHERE pubname <> 'pub_root' \\gexec");
	return;
}

# Published through its partitions: FOR TABLE the table or some partitions.
sub through { return "it is published through its partitions by $_[0]" }
sub root_hint { return "Publish it through its root, or not at all: $_[0]" }

refused("CREATE PUBLICATION pub_parts FOR TABLE parts.t2", 'add', 'parts.t2_4',
	through('publication pub_parts'), root_hint('ALTER PUBLICATION pub_parts SET (publish_via_partition_root = true);'),
	'FOR TABLE the table, without publish_via_partition_root');
my ($out, $err) = attempt($publisher, "\\set VERBOSITY verbose\nCREATE PUBLICATION pub_parts FOR TABLE parts.t2;\n"
	  . "CALL reshard_engine_run('parts.t2', 'add', 'parts.t2_4', '500 ms', 10)");
diag("the refusal, in full:\n$err");
on($publisher, "DROP PUBLICATION pub_parts");
refused("CREATE PUBLICATION pub_parts FOR TABLE parts.t2", 'remove', 'parts.t2_3',
	through('publication pub_parts'), root_hint('ALTER PUBLICATION pub_parts SET (publish_via_partition_root = true);'),
	'FOR TABLE the table, without publish_via_partition_root, a remove');
refused("CREATE PUBLICATION pub_one FOR TABLE parts.t2_1 WITH (publish_via_partition_root = true)", 'add', 'parts.t2_4',
	through('publication pub_one'), root_hint('ALTER PUBLICATION pub_one DROP TABLE parts.t2_1;'),
	'FOR TABLE a partition only (with publish_via_partition_root)');
refused("CREATE PUBLICATION pub_b FOR TABLE parts.t2, parts.t2_2 WITH (publish_via_partition_root = true);"
	  . " CREATE PUBLICATION pub_a FOR TABLE parts.t2_0, parts.t2_3;"
	  . " CREATE PUBLICATION pub_c FOR TABLE parts.t2_1, parts.t2;",
	'add', 'parts.t2_4', through('publications pub_a, pub_c'),
	root_hint('ALTER PUBLICATION pub_a DROP TABLE parts.t2_0, parts.t2_3;'
		  . ' ALTER PUBLICATION pub_c SET (publish_via_partition_root = true);'),
	'three publications, two of them through the partitions');

# Publishing the tables the engine fills or empties (its shadows in the
# table's schema, the new or removed partition, reshard_state), through the
# root or not: FOR ALL TABLES, FOR TABLES IN SCHEMA, FOR TABLE the new or
# removed partition.
sub fills { return "$_[0] would publish the tables the resharding fills" }
sub wide_hint
{
	return "Publish the table in a publication FOR TABLE parts.t2 WITH (publish_via_partition_root = true), not $_[0].";
}

for my $via ('', ' WITH (publish_via_partition_root = true)')
{
	my $label = $via eq '' ? 'without publish_via_partition_root' : 'with publish_via_partition_root';
	refused("CREATE PUBLICATION pub_new FOR TABLE parts.t2, parts.t2_4$via", 'add', 'parts.t2_4',
		fills('publication pub_new'), 'ALTER PUBLICATION pub_new DROP TABLE parts.t2_4;',
		"FOR TABLE the table and the new partition, $label");
	refused("CREATE PUBLICATION pub_removed FOR TABLE parts.t2, parts.t2_3$via", 'remove', 'parts.t2_3',
		fills('publication pub_removed'), 'ALTER PUBLICATION pub_removed DROP TABLE parts.t2_3;',
		"FOR TABLE the table and the removed partition, $label");
	refused("CREATE PUBLICATION pub_schema FOR TABLES IN SCHEMA parts$via", 'add', 'parts.t2_4',
		fills('publication pub_schema'), wide_hint('pub_schema (FOR TABLES IN SCHEMA parts)'),
		"FOR TABLES IN SCHEMA of the table, $label");
	refused("CREATE PUBLICATION pub_all FOR ALL TABLES$via", 'add', 'parts.t2_4',
		fills('publication pub_all'), wide_hint('pub_all (FOR ALL TABLES)'), "FOR ALL TABLES, $label");
}
refused("CREATE PUBLICATION pub_extension FOR TABLES IN SCHEMA public WITH (publish_via_partition_root = true);"
	  . " CREATE PUBLICATION pub_new FOR TABLE parts.t2_4",
	'add', 'parts.t2_4', fills('publications pub_extension, pub_new'),
	wide_hint('pub_extension (FOR TABLES IN SCHEMA public)') . ' ALTER PUBLICATION pub_new DROP TABLE parts.t2_4;',
	"FOR TABLES IN SCHEMA of the extension (reshard_state), and the new partition alone");

# The same check at the cutover: a publication that stops publishing
# through the root once the resharding is at its cutover stops it there
# (a change before is refused at the step after it, by the same check).
on($publisher, "CREATE PUBLICATION pub_parts FOR TABLE parts.t2 WITH (publish_via_partition_root = true);"
	  . " CALL reshard_begin('parts.t2', 'add', 'parts.t2_4');");
($out, $err) = attempt($publisher, q{
DO $$
BEGIN
    -- every step before the cutover (the phases in the engine's order)
    WHILE (SELECT f.ordinal FROM reshard_state s JOIN reshard_phases() f ON f.phase = s.phase
           WHERE s.parent = 'parts.t2'::regclass) < (SELECT ordinal FROM reshard_phases() WHERE phase = 'cutover') LOOP
        CALL reshard_step('parts.t2');
    END LOOP;
END
$$;
SELECT phase FROM reshard_state WHERE parent = 'parts.t2'::regclass;
ALTER PUBLICATION pub_parts SET (publish_via_partition_root = false);
\set VERBOSITY verbose
CALL reshard_step('parts.t2');
});
is($out, 'cutover', "the resharding reached the cutover");
like($err, qr/ERROR:  0A000: cannot reshard parts\.t2 while it is published through its partitions by publication pub_parts\n/,
	"a publication changed to publish_via_partition_root = false during the resharding: the cutover refuses");
on($publisher, "CALL reshard_abort('parts.t2')");
is(on($publisher, "SELECT phase FROM reshard_state WHERE parent = 'parts.t2'::regclass") . '; ' . on($publisher, $leftovers),
	'aborted; none', "reshard_abort undoes it, nothing of the engine left");
is(on($publisher, $t2_state), $t2_before, "the table is as it was");

# Published through its root, the same table is resharded, and stays published.
on($publisher, "ALTER PUBLICATION pub_parts SET (publish_via_partition_root = true)");
($out, $err) = attempt($publisher,
	"SET client_min_messages = warning; CALL reshard_engine_run('parts.t2', 'add', 'parts.t2_4', '500 ms', 10)");
is($err, '', "with publish_via_partition_root = true, the resharding of parts.t2 succeeds");
is(on($publisher, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'parts.t2'::regclass") . ' '
	  . on($publisher, "SELECT string_agg(schemaname || '.' || tablename, ', ') FROM pg_publication_tables WHERE pubname = 'pub_parts'"),
	'5 parts.t2', "it has five partitions and is still in its publication");

done_testing();
