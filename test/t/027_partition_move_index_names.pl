# test/t/027_partition_move_index_names.pl
#	partition_move makes every index of the partition on the server it
#	moves to, whatever names are taken there, and every index of the table
#	when it comes back: the table made on a server has each index (its
#	columns, uniqueness, constraint, predicate) under its name here if no
#	relation of the schema there has that name, else under a free name
#	PostgreSQL picks; another role's table, index, sequence and view of
#	those names stay as they were.  Names cut to 63 bytes (NAMEDATALEN - 1)
#	collide: two indexes of the parent whose names, after the partition's
#	name, are cut to one (ASCII, and multibyte characters, cut at a
#	character's boundary) on a move from one server to another both get
#	made; and a partition whose name is 62 bytes of multibyte characters
#	moves to a server, across, and back here with all its indexes.
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
link_servers($coordinator, { a => $server_a, b => $server_b });

# The partition of bucket 2: 62 bytes, 28 two-byte characters (o with
# diaeresis) after items_; in SQL, an expression of its name.
my $long = "'items_' || repeat(U&'\\00F6', 28)";
is(on($coordinator, "SELECT octet_length($long)"), '62', "(the name of the partition of bucket 2 is 62 bytes long)");

on($coordinator,
	"CREATE TABLE items (id bigint NOT NULL, v text NOT NULL, n int, w int) PARTITION BY HASH (id jumpbackhash8_int8_ops);
	 SELECT format('CREATE TABLE %I PARTITION OF items FOR VALUES WITH (MODULUS 8, REMAINDER %s)',
	               CASE i WHEN 2 THEN $long ELSE 'items_' || i END, i)
	 FROM generate_series(0, 7) AS i \\gexec
	 CREATE INDEX ON items (id);
	 ALTER TABLE items_1 ADD PRIMARY KEY (id), ADD UNIQUE (v);
	 CREATE INDEX ON items_1 (n) WHERE n > 5;
	 CREATE INDEX ON items_1 (w);
	 SELECT format('CREATE UNIQUE INDEX ON %I (v)', $long) \\gexec
	 INSERT INTO items SELECT i, 'v' || i, i % 10, i % 7 FROM generate_series(1, 200) AS i;");

# indexes(NODE, TABLE): TABLE an expression of a table's name; what each index of TABLE is, one a line, in order
# (the names left out): constraint or index, unique or not, its method,
# columns and predicate.
sub indexes
{
	my ($node, $table) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(d, E'\\n' ORDER BY d) FROM (
		     SELECT CASE c.contype WHEN 'p' THEN 'primary key ' WHEN 'u' THEN 'unique constraint '
		                           ELSE CASE WHEN x.indisunique THEN 'unique ' ELSE '' END || 'index ' END
		            || regexp_replace(pg_get_indexdef(x.indexrelid), '^.* USING ', '') AS d
		     FROM pg_index x LEFT JOIN pg_constraint c ON c.conindid = x.indexrelid AND c.conrelid = x.indrelid
		     WHERE x.indrelid = to_regclass('public.' || quote_ident($table))) AS u");
}

# names(NODE, TABLE): TABLE an expression of a table's name; the names of TABLE's indexes, in order.
sub names
{
	my ($node, $table) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(i.relname, ', ' ORDER BY i.relname) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		 WHERE x.indrelid = to_regclass('public.' || quote_ident($table))");
}

# Server a: a role of its own takes, in the schema the table goes to, the
# names of the indexes of items_1: a table, an index of its table, a
# sequence and a view; and the name PostgreSQL would choose first in the
# place of the primary key's.
on($server_a,
	"CREATE ROLE other; GRANT CREATE ON SCHEMA public TO other;
	 SET ROLE other;
	 CREATE TABLE items_1_pkey (x int);
	 CREATE TABLE items_1_pkey1 (x int);
	 CREATE TABLE others (x int);
	 CREATE INDEX items_1_w_idx ON others (x);
	 CREATE SEQUENCE items_1_v_key;
	 CREATE VIEW items_1_n_idx AS SELECT 1 AS one;");
my $others_query = "SELECT string_agg(c.relname || ' ' || c.relkind::text || ' ' || pg_get_userbyid(c.relowner), ', ' ORDER BY c.relname)
                     FROM pg_class c WHERE c.relowner = 'other'::regrole";
my $others = on($server_a, $others_query);

my $items_1 = indexes($coordinator, "'items_1'");
is($items_1, "index btree (id)\nindex btree (n) WHERE (n > 5)\nindex btree (w)\nprimary key btree (id)\nunique constraint btree (v)",
	"(items_1 has a primary key, a unique constraint and three indexes here)");
my $long_indexes = indexes($coordinator, $long);

# (a), (c): to server a, where the names are taken.
my ($ret, $out, $err) = call_until_done($coordinator, "CALL partition_move('items_1', 'a')", 'public.items');
is($ret, 0, "items_1 moved to server a") or diag($err);
is(indexes($server_a, "'items_1'"), $items_1,
	"the table on server a has every index of items_1: the same columns, uniqueness, constraints and predicates");
my $names = names($server_a, "'items_1'");
is(scalar(grep { /^(items_1_pkey|items_1_pkey1|items_1_w_idx|items_1_v_key|items_1_n_idx)$/ } split(/, /, $names)), 0,
	"none of them under a name another role's relation has there ($names)");
like($names, qr/(^|, )items_1_id_idx(,|$)/, "the index whose name is free there has it");
is(on($server_a, $others_query), $others, "the other role's relations there are as they were");
is(on($coordinator, "SELECT count(*) FROM items"), '200', "the table reads its 200 rows");

# The partition of bucket 2, whose name is 62 bytes, to server a.
($ret, $out, $err) = call_until_done($coordinator, "CALL partition_move(quote_ident($long), 'a')", 'public.items');
is($ret, 0, "the partition of bucket 2 moved to server a") or diag($err);
is(indexes($server_a, $long), $long_indexes, "the table on server a has its indexes");

# (b): indexes of the parent whose names, after a partition's, are cut to
# the same 63 bytes: ASCII, and two-byte characters (cut at a boundary).
on($coordinator,
	"CREATE INDEX items_by_n_and_w_with_a_name_long_enough_to_be_cut_once_moved_1 ON items (n);
	 CREATE INDEX items_by_n_and_w_with_a_name_long_enough_to_be_cut_once_moved_2 ON items (n, w);
	 CREATE INDEX U&\"items_\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4_eins\" ON items (w) WHERE w > 0;
	 CREATE INDEX U&\"items_\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4\\00E4_zwei\" ON items (v);");
my $parent = indexes($coordinator, "'items'");
my @parent = split(/\n/, $parent);
is(scalar(@parent), 5, "(the parent has five indexes)");

# Across, from server a to server b: the table there gets the parent's.
for my $partition ("'items_1'", $long)
{
	($ret, $out, $err) = call_until_done($coordinator, "CALL partition_move(quote_ident($partition), 'b')", 'public.items');
	is($ret, 0, "$partition moved from server a to server b") or diag($err);
	is(indexes($server_b, $partition) =~ s/ ON public\.\S+//gr, $parent =~ s/ ON public\.\S+//gr,
		"the table on server b has every index of the parent, two of whose names were cut to one");
}
note("on server b, items_1's indexes: " . names($server_b, "'items_1'"));
is(on($server_b,
		"SELECT string_agg(octet_length(i.relname)::text, ' ' ORDER BY i.relname)
		 FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		 WHERE x.indrelid = to_regclass('public.items_1')
		   AND i.relname IN (left('items_1_items_by_n_and_w_with_a_name_long_enough_to_be_cut_once_moved_1', 63),
		                     'items_1_items_' || repeat(U&'\\00E4', 24))"),
	'63 62', "on server b, the first of each pair has the name cut to 63 bytes, at a character's boundary (62)");

# Back here: the partitions get every index of the parent.
for my $partition ("'items_1'", $long)
{
	($ret, $out, $err) = call_until_done($coordinator, "CALL partition_move(quote_ident($partition), NULL)", 'public.items');
	is($ret, 0, "$partition moved back here") or diag($err);
	is(indexes($coordinator, $partition) =~ s/ ON public\.\S+//gr, $parent =~ s/ ON public\.\S+//gr,
		"$partition here has every index of the parent");
	is(on($coordinator,
			"SELECT string_agg(i.relname, ', ') FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
			 WHERE x.indrelid = to_regclass(quote_ident($partition)) AND NOT starts_with(i.relname, left($partition, 7))"),
		'', "each named after the partition (cut to fit)");
}
is(on($coordinator, "SELECT count(*) FROM items"), '200', "the table reads its 200 rows");

$coordinator->stop;
$server_a->stop;
$server_b->stop;
done_testing();
