# test/t/003_dump_restore.pl
#	pg_dump and restore of a database that uses the extension: stored rings,
#	a table partitioned by jumpbackhash, a generated column and an expression
#	index, tables partitioned BY HASH with the jumpbackhash operator classes
#	(one installed with the extension, one added by a superuser, which the
#	dump must create).  The restored database must give byte-identical rings
#	and the same answers, with every row in the partition of its bucket, also
#	when the dump loads the rows through the partitioned tables
#	(--load-via-partition-root), with the extension's records of a table
#	whose partitions keep its primary key and of co-located tables; and of
#	a database created at 1.1 and
#	updated, whose tables keep placing and pruning after the restore.
#
# suite: dump and restore
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $node = new_server('dump_restore');

# sql(DATABASE, QUERY): the result, unaligned; an error shows as its message.
sub sql { return result_or_error($node, @_) }

is(sql('postgres', 'CREATE DATABASE original') . sql('postgres', 'CREATE DATABASE restored')
	  . sql('postgres', 'CREATE DATABASE rerouted'),
	'', "databases created");

$node->safe_psql('original', q{
CREATE EXTENSION subsetting;
CREATE TABLE nodes (id int PRIMARY KEY, weight float8 NOT NULL, zone int NOT NULL);
INSERT INTO nodes SELECT i, 1 + (i % 3) * 0.25, i % 4 FROM generate_series(1, 40) AS i;
CREATE TABLE rings (name text PRIMARY KEY, ring partition_ring NOT NULL);
INSERT INTO rings SELECT 'small', ring_build(array_agg(id), array_agg(weight), array_agg(zone),
                                            part_power => 8, replicas => 3) FROM nodes;
INSERT INTO rings SELECT 'large', ring_build(array_agg(id), array_agg(weight), array_agg(zone),
                                            part_power => 18, replicas => 3, seed => 5) FROM nodes;
CREATE TABLE accounts (id bigint NOT NULL, email text NOT NULL,
                       shard int GENERATED ALWAYS AS (jumpbackhash(email, 8)) STORED)
    PARTITION BY LIST (jumpbackhash(id, 4));
CREATE TABLE accounts_0 PARTITION OF accounts FOR VALUES IN (0);
CREATE TABLE accounts_1 PARTITION OF accounts FOR VALUES IN (1);
CREATE TABLE accounts_2 PARTITION OF accounts FOR VALUES IN (2);
CREATE TABLE accounts_3 PARTITION OF accounts FOR VALUES IN (3);
CREATE INDEX accounts_bucket ON accounts (jumphash(id, 64));
INSERT INTO accounts (id, email) SELECT i, 'user' || i || '@example.com' FROM generate_series(1, 5000) AS i;
CREATE TABLE users (id bigint PRIMARY KEY, email text NOT NULL) PARTITION BY HASH (id jumpbackhash16_int8_ops);
SELECT jumpbackhash_create_operator_classes(260);
CREATE TABLE sessions (token text PRIMARY KEY) PARTITION BY HASH (token jumpbackhash260_text_ops);
DO $$ BEGIN
    FOR b IN 0 .. 15 LOOP
        EXECUTE format('CREATE TABLE users_%s PARTITION OF users FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b);
    END LOOP;
    FOR b IN 0 .. 259 LOOP
        EXECUTE format('CREATE TABLE sessions_%s PARTITION OF sessions FOR VALUES WITH (MODULUS 260, REMAINDER %s)', b, b);
    END LOOP;
END $$;
INSERT INTO users SELECT i, 'user' || i || '@example.com' FROM generate_series(1, 5000) AS i;
INSERT INTO sessions SELECT md5(i::text) FROM generate_series(1, 5000) AS i;
CREATE TABLE members (id bigint PRIMARY KEY, email text, CONSTRAINT members_email UNIQUE (id, email))
    PARTITION BY HASH (id jumpbackhash16_int8_ops);
DO $$ BEGIN
    FOR b IN 0 .. 15 LOOP
        EXECUTE format('CREATE TABLE members_%s PARTITION OF members FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b);
    END LOOP;
END $$;
INSERT INTO members SELECT i, 'member' || i FROM generate_series(1, 1000) AS i;
CALL unique_constraints_to_partitions('members');
SELECT colocate(ARRAY['users', 'members']::regclass[]);
});

my $dump = PostgreSQL::Test::Utils::tempdir() . '/original.dump';
my ($out, $err) = run_command(
	[ $node->installed_command('pg_dump'), '-Fc', '-d', $node->connstr('original'), '-f', $dump ]);
is($out . $err, '', "pg_dump succeeds");
($out, $err) = run_command(
	[ $node->installed_command('pg_restore'), '--exit-on-error', '-d', $node->connstr('restored'), $dump ]);
is($out . $err, '', "pg_restore succeeds");
# The same through the partitioned tables: every row is routed again.
$err = '';
IPC::Run::run(
	[ $node->installed_command('pg_dump'), '-d', $node->connstr('original'), '--load-via-partition-root' ],
	'2>', \$err, '|',
	[ $node->installed_command('psql'), '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('rerouted') ],
	'>', '/dev/null', '2>>', \$err);
is($err, '', "pg_dump --load-via-partition-root | psql succeeds");

# same(NAME, QUERY): the query gives the same rows, and not an error, on both.
sub same
{
	my ($name, $query) = @_;
	my $a = sql('original', $query);
	my $b = sql('restored', $query);
	if ($a eq '' || $a =~ /ERROR/)
	{
		is($a, '(rows, not an error)', $name);
	}
	else
	{
		is($b, $a, $name);
	}
}

same("rings are byte-identical", "SELECT name, md5(partition_ring_send(ring)::text) FROM rings ORDER BY name");
same("ring fingerprints", "SELECT name, (ring_info(ring)).fingerprint FROM rings ORDER BY name");
same("ring lookups",
	"SELECT md5(string_agg(ring_nodes(ring, k)::text, ',' ORDER BY name, k)) FROM rings,
	 (SELECT hashint8(i) * 4294967311 AS k FROM generate_series(1, 2000) AS i) keys");
same("rows per partition", "SELECT tableoid::regclass, count(*) FROM accounts GROUP BY 1 ORDER BY 1");
same("every row in its partition",
	"SELECT count(*) FROM accounts WHERE 'accounts_' || jumpbackhash(id, 4) <> tableoid::regclass::text");
same("generated column", "SELECT md5(string_agg(shard::text, ',' ORDER BY id)) FROM accounts");
same("partition pruning",
	"EXPLAIN (COSTS OFF) SELECT * FROM accounts WHERE jumpbackhash(id, 4) = jumpbackhash(42, 4) AND id = 42");
for my $db ('restored', 'rerouted')
{
	is(sql($db,
			"SELECT count(*) || ' ' || count(*) FILTER (WHERE tableoid::regclass::text <> 'users_' || jumpbackhash(id, 16))
			 FROM users"),
		"5000 0", "$db: every user in the partition of jumpbackhash(id, 16)");
	is(sql($db,
			"SELECT count(*) || ' ' || count(*) FILTER (WHERE tableoid::regclass::text <> 'sessions_' || jumpbackhash(token, 260))
			 FROM sessions"),
		"5000 0", "$db: every session in the partition of jumpbackhash(token, 260)");
	is(sql($db,
			"SELECT count(*) FROM pg_depend WHERE refclassid = 'pg_extension'::regclass
			 AND classid = 'pg_opclass'::regclass
			 AND objid IN (SELECT oid FROM pg_opclass WHERE opcname ~ '^jumpbackhash260_')"),
		'0', "$db: jumpbackhash260_text_ops is not a member of the extension");
	is(sql($db,
			"SELECT DISTINCT pronamespace::regnamespace FROM pg_proc WHERE proname ~ '^jumpbackhash(16|260)_'"),
		'subsetting_partition_hash', "$db: the support functions of both are in subsetting_partition_hash");
}
same("rows per hash partition",
	"SELECT tableoid::regclass::text, count(*) FROM users GROUP BY 1 UNION ALL
	 SELECT tableoid::regclass::text, count(*) FROM sessions GROUP BY 1 ORDER BY 1");
same("the partition keys", "SELECT pg_get_partkeydef('users'::regclass), pg_get_partkeydef('sessions'::regclass)");

# The partitions a plan reads (whether by index or not depends on statistics).
sub scanned
{
	my ($db, $query) = @_;
	return join('', map { "$_ " } sql($db, "EXPLAIN (COSTS OFF) $query") =~ / on ([a-z_0-9]+) /g);
}
like(scanned('original', "SELECT * FROM users WHERE id = 42")
	  . scanned('original', "SELECT * FROM sessions WHERE token = md5('42')"),
	qr/^users_3 sessions_[0-9]+ $/,
	"in the original, WHERE id = 42 and WHERE token = md5('42') read one partition each");
for my $db ('restored', 'rerouted')
{
	is(scanned($db, "SELECT * FROM users WHERE id = 42"),
		scanned('original', "SELECT * FROM users WHERE id = 42"),
		"$db: WHERE id = 42 reads the one partition it reads in the original");
	is(scanned($db, "SELECT * FROM sessions WHERE token = md5('42')"),
		scanned('original', "SELECT * FROM sessions WHERE token = md5('42')"),
		"$db: WHERE token = md5('42') reads the one partition it reads in the original");
}
# The extension's records of the tables (the constraints the partitions of
# members keep, the group of users and members): dumped, their tables by
# name, and read back for the tables restored.
for my $db ('restored', 'rerouted')
{
	is(sql($db, "SELECT string_agg(parent::text || ' ' || name || ' ' || definition, '; ' ORDER BY name)
	             FROM partition_unique_constraints")
		  . ' | ' . sql($db, "SELECT colocated_with('members')"),
		'members members_email UNIQUE (id, email); members members_pkey PRIMARY KEY (id) | {members,users}',
		"$db: the records of the handed-over constraints and of the group, by the restored tables");
	like(sql($db, "INSERT INTO members VALUES (42, 'member42')"), qr/duplicate key value violates unique constraint/,
		"$db: the partitions of members refuse a duplicate");
	is(sql($db, "CALL unique_constraints_to_parent('members')")
		  . sql($db, "SELECT string_agg(conname, ',' ORDER BY conname) FROM pg_constraint WHERE conrelid = 'members'::regclass AND contype IN ('p', 'u')"),
		'members_email,members_pkey', "$db: the constraints given back to members, by the restored records");
}
like(sql('restored', "EXPLAIN (COSTS OFF) SELECT * FROM users WHERE id = 42"), qr/on users_3 users/,
	"the restored users table prunes to users_3 (jumpbackhash(42, 16) = 3)");
like(sql('restored', "INSERT INTO users VALUES (42, 'again')"),
	qr/duplicate key value violates unique constraint/, "the restored primary key refuses a duplicate");
like(sql('restored', "SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT count(*) FROM accounts WHERE jumphash(id, 64) = 5"),
	qr/accounts_bucket|Index/, "the restored index is used");

# A database created at 1.1, with a table partitioned by an installed class
# and one by a class added under 1.1 (whose support functions 1.1 put in the
# extension's schema), updated to the current version, then dumped and
# restored into a fresh database: the rows stay in their partitions, the
# tables place new rows and prune.
is( sql('postgres', 'CREATE DATABASE at_1_1') . sql('postgres', 'CREATE DATABASE at_1_1_restored'),
	'', 'databases for the update created');
$node->safe_psql('at_1_1', q{
CREATE EXTENSION subsetting VERSION '1.1';
SELECT jumpbackhash_create_operator_classes(270);
CREATE TABLE users (id bigint PRIMARY KEY) PARTITION BY HASH (id jumpbackhash16_int8_ops);
CREATE TABLE sessions (token uuid PRIMARY KEY) PARTITION BY HASH (token jumpbackhash270_uuid_ops);
DO $$ BEGIN
    FOR b IN 0 .. 15 LOOP
        EXECUTE format('CREATE TABLE users_%s PARTITION OF users FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b);
    END LOOP;
    FOR b IN 0 .. 269 LOOP
        EXECUTE format('CREATE TABLE sessions_%s PARTITION OF sessions FOR VALUES WITH (MODULUS 270, REMAINDER %s)', b, b);
    END LOOP;
END $$;
INSERT INTO users SELECT generate_series(1, 3000);
INSERT INTO sessions SELECT md5(i::text)::uuid FROM generate_series(1, 3000) AS i;
ALTER EXTENSION subsetting UPDATE;
});
my $dump_1_1 = PostgreSQL::Test::Utils::tempdir() . '/at_1_1.dump';
($out, $err) = run_command(
	[ $node->installed_command('pg_dump'), '-Fc', '-d', $node->connstr('at_1_1'), '-f', $dump_1_1 ]);
is($out . $err, '', "pg_dump of the updated database succeeds");
($out, $err) = run_command(
	[
		$node->installed_command('pg_restore'), '--exit-on-error',
		'-d', $node->connstr('at_1_1_restored'), $dump_1_1
	]);
is($out . $err, '', "its pg_restore succeeds");
for my $db ('at_1_1', 'at_1_1_restored')
{
	is( sql($db, "INSERT INTO users SELECT generate_series(3001, 4000)")
		  . sql($db, "INSERT INTO sessions SELECT md5(i::text)::uuid FROM generate_series(3001, 4000) AS i")
		  . sql($db,
			"SELECT count(*) || ' ' || count(*) FILTER (WHERE tableoid::regclass::text <> 'users_' || jumpbackhash(id, 16))
			 FROM users")
		  . ' '
		  . sql($db,
			"SELECT count(*) || ' ' || count(*) FILTER (WHERE tableoid::regclass::text <> 'sessions_' || jumpbackhash(token, 270))
			 FROM sessions"),
		'4000 0 4000 0', "$db: every row, from before and after, in the partition of its bucket");
	is(scanned($db, "SELECT * FROM users WHERE id = 42"), 'users_3 ',
		"$db: WHERE id = 42 reads users_3 (jumpbackhash(42, 16) = 3)");
	is(scanned($db, "SELECT * FROM sessions WHERE token = md5('42')::uuid"),
		'sessions_' . sql($db, "SELECT jumpbackhash(md5('42')::uuid, 270)") . ' ',
		"$db: WHERE token = ... reads the partition of its bucket");
	is( sql($db,
			"SELECT string_agg(DISTINCT substring(proname FROM '^jumpbackhash[0-9]+') || ' ' || pronamespace::regnamespace, ', ')
			 FROM pg_proc WHERE proname ~ '^jumpbackhash(16|270)_'"),
		'jumpbackhash16 subsetting_partition_hash, jumpbackhash270 public',
		"$db: the installed classes' support functions moved, those added under 1.1 stayed");
}

done_testing();
