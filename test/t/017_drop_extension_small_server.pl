# test/t/017_drop_extension_small_server.pl
#	The extension on a server with a small lock table (max_connections = 40,
#	every other setting at its default): DROP EXTENSION alone runs out of
#	lock table, as it locks each of the about 9,600 objects it drops in one
#	transaction; jumpbackhash_drop_operator_classes() then DROP EXTENSION
#	drops it, and refuses while a table uses a class, dropping nothing.  An
#	update from 1.1 with a table partitioned by a class works there too, and
#	the table keeps placing and pruning.
#
# suite: drop-extension-small-server
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $node = new_server('small', "max_connections = 40\n");

# sql(DATABASE, QUERY): the result, unaligned; an error shows as its message.
sub sql { return result_or_error($node, @_) }

my $classes = "SELECT count(*) FROM pg_opclass WHERE opcname ~ '^jumpbackhash[0-9]+_'";
my $installed = "SELECT count(*) FROM pg_extension WHERE extname = 'subsetting'";

is(sql('postgres', 'SHOW max_connections'), '40', 'max_connections is 40');
is(sql('postgres', 'CREATE DATABASE alone') . sql('alone', 'CREATE EXTENSION subsetting')
	  . sql('alone', $classes), '1536', 'the extension is installed with its 1,536 classes');
like(sql('alone', 'DROP EXTENSION subsetting'), qr/out of shared memory/,
	'DROP EXTENSION alone runs out of shared memory (its locks do not fit)');
is(sql('alone', $installed), '1', 'and the extension is still there');

is(sql('alone', 'CALL jumpbackhash_drop_operator_classes()'), '',
	'jumpbackhash_drop_operator_classes() drops the classes');
is(sql('alone', $classes), '0', 'no class is left');
is(sql('alone', 'DROP EXTENSION subsetting') . sql('alone', $installed), '0', 'then DROP EXTENSION drops it');

# A table partitioned by a class: nothing is dropped, the table is named.
is( sql('alone', 'CREATE EXTENSION subsetting')
	  . sql('alone',
		'CREATE TABLE users (id bigint PRIMARY KEY) PARTITION BY HASH (id jumpbackhash16_int8_ops)'),
	'', 'a table partitioned by jumpbackhash16_int8_ops');
like(
	sql('alone', 'CALL jumpbackhash_drop_operator_classes()'),
	qr/cannot drop the operator classes of extension subsetting because other objects depend on them\n.*DETAIL:  table users depends on operator class jumpbackhash16_int8_ops/s,
	'jumpbackhash_drop_operator_classes() refuses, naming the table');
is(sql('alone', $classes), '1536', 'and drops nothing');
is( sql('alone', 'DROP TABLE users')
	  . sql('alone', 'CALL jumpbackhash_drop_operator_classes(4)')
	  . sql('alone', 'DROP EXTENSION subsetting')
	  . sql('alone', $installed),
	'0', 'without the table, the classes, 4 families at a time, then the extension are dropped');

# An update from 1.1 holds a lock on each support function it moves and
# each family it comments (about 1,900): it fits.
is( sql('postgres', 'CREATE DATABASE updated')
	  . sql('updated', "CREATE EXTENSION subsetting VERSION '1.1'")
	  . sql('updated',
		'CREATE TABLE users (id bigint PRIMARY KEY) PARTITION BY HASH (id jumpbackhash16_int8_ops)')
	  . sql('updated',
		"SELECT format('CREATE TABLE users_%s PARTITION OF users FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b)
		 FROM generate_series(0, 15) AS b \\gexec")
	  . sql('updated', 'INSERT INTO users SELECT generate_series(1, 1000)'),
	'', 'at 1.1, a table partitioned by jumpbackhash16_int8_ops');
is(sql('updated', 'ALTER EXTENSION subsetting UPDATE') . sql('updated',
		"SELECT extversion FROM pg_extension WHERE extname = 'subsetting'"),
	'1.2', 'ALTER EXTENSION UPDATE from 1.1 works');
is( sql('updated', 'INSERT INTO users SELECT generate_series(1001, 2000)')
	  . sql('updated',
		"SELECT count(*) || ' ' || count(*) FILTER (WHERE tableoid::regclass::text <> 'users_' || jumpbackhash(id, 16))
		 FROM users"),
	'2000 0', 'the rows from before and after the update are in the partition of their bucket');
# jumpbackhash(42, 16) = 3: hash4j's jumpBackHash (README).
like(sql('updated', 'EXPLAIN (COSTS OFF) SELECT * FROM users WHERE id = 42'),
	qr/^[^\n]* on users_3 users\n[^\n]*\(id = 42\)$/, 'WHERE id = 42 reads users_3 alone');
is( sql('updated', 'DROP TABLE users')
	  . sql('updated', 'CALL jumpbackhash_drop_operator_classes()')
	  . sql('updated', 'DROP EXTENSION subsetting')
	  . sql('updated', $installed),
	'0', 'the updated extension is dropped the same way');

$node->stop;
done_testing();
