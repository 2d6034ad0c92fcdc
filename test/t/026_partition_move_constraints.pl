# test/t/026_partition_move_constraints.pl
#	partition_move carries a partition's integrity and text order to the
#	table it makes on a server: its CHECK constraints (its own and the
#	parent's) enforced there, its PRIMARY KEY, UNIQUE and EXCLUDE
#	constraints and partial unique index as such (under their names), and
#	every collatable column's collation by name, so that a server whose
#	database sorts otherwise (ICU "de" against the coordinator's C.UTF-8)
#	answers ORDER BY and comparisons of text as before.  Then across (to a
#	second server) and back here: the CHECK constraints and the order stay.
#	What a server lacks (a collation, a function a CHECK calls) is refused
#	before a row moves, naming it.
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
my $server_a = new_server('server_a');
my $server_b = new_server('server_b');

# Server a: its database postgres, C.UTF-8 as here; server b: a database de
# of ICU's "de" (lower case before upper, ä beside a), reached as server de.
link_servers($coordinator, { a => $server_a });
$server_b->safe_psql('postgres', "CREATE DATABASE de LOCALE_PROVIDER icu ICU_LOCALE 'de' TEMPLATE template0");
on($coordinator,
	sprintf("CREATE SERVER de FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '%s', port '%d', dbname 'de');
	         CREATE USER MAPPING FOR CURRENT_USER SERVER de;", $server_b->host, $server_b->port));
on($coordinator,
	"CREATE TABLE items (id bigint NOT NULL, v text NOT NULL, n int NOT NULL CHECK (n >= 0), r int4range)
	     PARTITION BY HASH (id jumpbackhash8_int8_ops);
	 SELECT format('CREATE TABLE items_%s PARTITION OF items FOR VALUES WITH (MODULUS 8, REMAINDER %s)', i, i)
	 FROM generate_series(0, 7) AS i \\gexec
	 CREATE INDEX ON items (id);
	 ALTER TABLE items_3 ADD CONSTRAINT items_3_pkey PRIMARY KEY (id), ADD CONSTRAINT items_3_v_unique UNIQUE (v),
	     ADD CONSTRAINT small CHECK (n < 1000), ADD CONSTRAINT no_overlap EXCLUDE USING gist (r WITH &&);
	 CREATE UNIQUE INDEX items_3_big_n ON items_3 (n) WHERE n > 500;
	 INSERT INTO items SELECT i, (ARRAY['Zebra', 'apple', 'Äpfel', 'zoo', 'Apple', 'ähnlich', 'Bär', 'berg'])[1 + i % 8] || i,
	                          CASE WHEN i < 500 THEN i + 501 ELSE i % 500 END, int4range(10 * i, 10 * i + 5)
	 FROM generate_series(1, 2000) AS i;");

# What is read of items_3 and of the table, the same before and after.
my %reads = (
	'ORDER BY v LIMIT 4' => "SELECT string_agg(v, ',') FROM (SELECT v FROM items_3 ORDER BY v LIMIT 4) AS x",
	"count(v < 'a')" => "SELECT count(*) FROM items_3 WHERE v < 'a'",
	'the parent, ORDER BY v' => "SELECT md5(string_agg(v, ',' ORDER BY v)) FROM items",
	'max(v)' => "SELECT max(v) FROM items_3");
my %before = map { $_ => on($coordinator, $reads{$_}) } keys %reads;

# placement(): where items_3 is.
sub placement
{
	return on($coordinator,
		"SELECT coalesce(server, 'here') FROM partition_placement WHERE partition = 'items_3'::regclass");
}

# refused(SQL): the error of SQL, a write through the coordinator, or
# 'accepted' (then undone: in a transaction rolled back).
sub refused
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $coordinator->psql('postgres', "BEGIN; $sql; ROLLBACK;", on_error_stop => 1);
	return $ret == 0 ? 'accepted' : $err;
}

# The writes that the partition's constraints refuse, each with what its
# error names: a row of bucket 3 (id $id) changed, or one added.
my $id = on($coordinator, "SELECT min(id) FROM items_3");
my $other = on($coordinator, "SELECT max(id) FROM items_3");
my $new_id = on($coordinator, "SELECT min(i) FROM generate_series(100001, 200000) AS i WHERE jumpbackhash(i, 8) = 3");
my $big = on($coordinator, "SELECT n FROM items_3 WHERE n > 500 LIMIT 1");
my %violations = (
	'CHECK n >= 0 (the parent\'s)' => [ "UPDATE items SET n = -5 WHERE id = $id", qr/items_n_check/ ],
	'CHECK small (the partition\'s)' => [ "UPDATE items SET n = 1001 WHERE id = $id", qr/small/ ],
	'PRIMARY KEY' => [ "INSERT INTO items_3 VALUES ($id, 'fresh', 1, NULL)", qr/items_3_pkey/ ],
	'UNIQUE (v)' => [ "UPDATE items SET v = (SELECT v FROM items WHERE id = $other) WHERE id = $id", qr/items_3_v_unique/ ],
	'EXCLUDE (r WITH &&)' => [ "UPDATE items SET r = (SELECT r FROM items WHERE id = $other) WHERE id = $id", qr/no_overlap/ ],
	'partial UNIQUE index (n) WHERE n > 500' => [ "INSERT INTO items_3 VALUES ($new_id, 'fresh', $big, NULL)", qr/items_3_big_n/ ]);

# refusals(WHERE): each violation refused, with its constraint named.
sub refusals
{
	my ($where) = @_;
	for my $what (sort keys %violations)
	{
		my ($sql, $names) = @{ $violations{$what} };
		like(refused($sql), $names, "$where: a write that breaks $what is refused");
	}
	is(refused("INSERT INTO items_3 VALUES ($new_id, 'fresh', 1, NULL)"), 'accepted', "$where: a write that breaks nothing is accepted");
	return;
}

# reads_unchanged(WHERE)
sub reads_unchanged
{
	my ($where) = @_;
	is(on($coordinator, $reads{$_}), $before{$_}, "$where: $_ answers as before") for sort keys %reads;
	return;
}

refusals('before the move');
isnt($before{'ORDER BY v LIMIT 4'}, $server_b->safe_psql('de', "SELECT string_agg(v, ',') FROM (SELECT v FROM (VALUES ('Zebra'), ('apple'), ('Äpfel'), ('zoo'), ('Apple')) AS x(v) ORDER BY v LIMIT 4) AS y"),
	"(the database de sorts otherwise than here)");

# Refused before a row moves: a collation the server lacks, a function a
# CHECK constraint calls that is not there.
on($coordinator,
	"CREATE COLLATION sv (provider = icu, locale = 'sv');
	 CREATE FUNCTION positive(int) RETURNS boolean LANGUAGE sql IMMUTABLE RETURN \$1 >= 0;
	 CREATE TABLE others (id bigint NOT NULL, v text COLLATE sv, n int) PARTITION BY HASH (id jumpbackhash8_int8_ops);
	 SELECT format('CREATE TABLE others_%s PARTITION OF others FOR VALUES WITH (MODULUS 8, REMAINDER %s)', i, i)
	 FROM generate_series(0, 7) AS i \\gexec
	 ALTER TABLE others_5 ADD CONSTRAINT uses_positive CHECK (positive(n));
	 INSERT INTO others SELECT i, 'x', 1 FROM generate_series(1, 100) AS i;");
my ($ret, $out, $err) = $coordinator->psql('postgres', "CALL partition_move('others_5', 'a')");
like($err, qr/cannot move public\.others_5 to server "a": .*collation public\.sv, of column v, does not exist there/,
	"a column's collation that the server lacks: refused, naming the column and the collation");
like($err, qr/function public\.positive\(integer\), used by constraint uses_positive of public\.others_5, does not exist there/,
	"a function a CHECK constraint calls that the server lacks: refused, naming both");
is(on($coordinator, "SELECT coalesce(server, 'here') FROM partition_placement WHERE partition = 'others_5'::regclass")
	  . ' ' . on($server_a, "SELECT count(*) FROM pg_class WHERE relname = 'others_5'"),
	'here 0', "others_5 stays here, nothing made on server a");

# To the server of another collation.
my ($moved) = call_until_done($coordinator, "CALL partition_move('items_3', 'de')", 'public.items');
is($moved, 0, "items_3 moved to server de");
is(placement(), 'de', "items_3 is on server de");
is($server_b->safe_psql('de',
		"SELECT string_agg(conname || ' ' || contype::text, ', ' ORDER BY conname) FROM pg_constraint
		 WHERE conrelid = 'items_3'::regclass AND contype <> 'n'"),
	'items_3_pkey p, items_3_v_unique u, items_n_check c, no_overlap x, small c',
	"the table on server de has the partition's constraints, under their names");
is($server_b->safe_psql('de',
		"SELECT indisunique FROM pg_index WHERE indexrelid = to_regclass('items_3_big_n')"),
	't', "and its partial unique index, unique");
is($server_b->safe_psql('de',
		"SELECT attcollation::regcollation FROM pg_attribute WHERE attrelid = 'items_3'::regclass AND attname = 'v'"),
	'"C.utf8"', "its text column has the collation of the coordinator's database, by name");
reads_unchanged('on server de');
refusals('on server de');

# Across, to server a.
($moved) = call_until_done($coordinator, "CALL partition_move('items_3', 'a')", 'public.items');
is($moved, 0, "items_3 moved from server de to server a");
is(on($server_a, "SELECT string_agg(conname, ', ' ORDER BY conname) FROM pg_constraint
                  WHERE conrelid = 'items_3'::regclass AND contype = 'c'"),
	'items_n_check, small', "the table on server a has the CHECK constraints");
reads_unchanged('on server a');
like(refused($violations{"CHECK small (the partition's)"}[0]), qr/small/, "on server a: CHECK small is enforced");

# Back here.
($moved) = call_until_done($coordinator, "CALL partition_move('items_3', NULL)", 'public.items');
is($moved, 0, "items_3 moved back here");
is(placement(), 'here', "items_3 is here");
is(on($coordinator, "SELECT string_agg(conname, ', ' ORDER BY conname) FROM pg_constraint
                     WHERE conrelid = 'items_3'::regclass AND contype = 'c'"),
	'items_n_check, small', "the table here has the CHECK constraints, as a partition would");
reads_unchanged('back here');
like(refused($violations{"CHECK small (the partition's)"}[0]), qr/small/, "back here: CHECK small is enforced");
like(refused($violations{"CHECK n >= 0 (the parent's)"}[0]), qr/items_n_check/, "back here: the parent's CHECK is enforced");

$coordinator->stop;
$server_a->stop;
$server_b->stop;
done_testing();
