# test/t/022_copy_rows.pl
#	reshard_copy_rows: the rows of a table copied with COPY between the
#	coordinator and two postgres_fdw servers, in the four directions (local
#	to foreign, foreign to local, foreign to foreign across servers, local
#	to local), with values that COPY's text format must escape and types
#	whose text depends on settings (set differently on the calling session
#	and for the remote role), dropped and generated columns, renamed remote
#	columns and another column order on the target: each copy equal to the
#	source (a digest of both computed under the same settings).  Errors: a
#	row a remote CHECK refuses (nothing committed there), a missing column,
#	a foreign table of another wrapper, the rules of postgres_fdw for roles
#	that are not superusers (a password in the mapping, used by the server),
#	a missing privilege.  A long copy cancelled by statement_timeout,
#	terminated, and cut by its server stopping: an error at once, nothing
#	committed remotely, the remote session gone.
#
# suite: copy rows
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $BIG = 2_000_000;
my $coordinator = new_server('coordinator');
my $server_a = new_server('server_a');
my $server_b = new_server('server_b');

# The types of the columns, on every server.
my $types = <<'SQL';
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
CREATE TYPE pair AS (x int, y text);
CREATE SCHEMA other;
SQL
on($_, $types) for ($coordinator, $server_a, $server_b);

# The source: a dropped column, a generated one, values to escape.
on($coordinator, <<'SQL');
CREATE EXTENSION subsetting;
CREATE EXTENSION postgres_fdw;
CREATE TABLE src (id int PRIMARY KEY, dropme int, t text, b bytea, ta text[], ia int[], c pair, j jsonb,
                  n numeric, f4 real, f8 double precision, ts timestamp, tz timestamptz, iv interval,
                  m mood, d posint, g int GENERATED ALWAYS AS (id * 2) STORED);
ALTER TABLE src DROP COLUMN dropme;
INSERT INTO src (id, t, b, ta, ia, c, j, n, f4, f8, ts, tz, iv, m, d) VALUES
 (1, E'tab\there', '\x00ff5c0a0d09'::bytea, ARRAY['a,b', 'c"d', NULL, E'e\\f', '', 'NULL', '{x}'], '{1,NULL,3}',
  ROW(1, 'x,"y" (z)')::pair, '{"a": "b\n\u00e9\\", "n": [1, 2.50, null]}', 'NaN', 'Infinity', '-0',
  'infinity', '-infinity', '-1 day +02:03:04.5', 'sad', 1),
 (2, E'new\nline, CR\r, end', '', '{}', '{}', ROW(NULL, NULL)::pair, 'null', '1e1000', 3.4028235e38, 1.7976931348623157e308,
  '-infinity', 'infinity', '1 year 2 mons -3 days -00:00:00.000001', 'ok', 2),
 (3, E'back\\slash \\N', '\x'::bytea, ARRAY[E'tab\tin', E'nl\nin', E'bs\\in'], '{-2147483648}', ROW(-1, '')::pair,
  '"\\N"', '-0.000000000000000000000000001', 1.4e-45, 4.9e-324,
  '294276-12-31 23:59:59.999999', '2024-03-31 02:30:00+05:30', '-178000000 years', 'happy', 2147483647),
 (4, '\N', decode(repeat('ff', 300), 'hex'), ARRAY['\N'], NULL, NULL, '[]', '123456789012345678901234567890.123456789', '-Infinity', '-1e-308',
  '4713-01-01 00:00:00 BC', '1999-12-31 23:59:59.999999-11:30', '00:00:00', NULL, NULL),
 (5, 'ünïcødé 😀 日本語', '\x5c4e'::bytea, '{"\\N"}', '{{1,2},{3,4}}', ROW(2147483647, E'\t')::pair,
  '{"k": "ünï 😀", "e": ""}', 'NaN', 'NaN', 'NaN', '2000-02-29 12:00:00', '1901-12-13 20:45:52+00', '-00:00:00.000001', 'ok', 7),
 (6, '', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (7, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (8, E'\x01\x7f ctl \b\f\v', E'\\x5c'::bytea, ARRAY[E'\b\f\v'], '{0}', ROW(0, 'NULL')::pair, '{"t": "\t"}',
  '0', '-0', '-0', '2024-01-01', '2024-07-01 12:00:00 Europe/Paris', '3 days 04:05:06.789', 'sad', 3);
-- a local target, another column order, its own generated column and a default
CREATE TABLE back2 (d posint, g int GENERATED ALWAYS AS (id * 2) STORED, m mood, iv interval, extra text DEFAULT 'x',
                    tz timestamptz, ts timestamp, f8 double precision, f4 real, n numeric, j jsonb, c pair, ia int[],
                    ta text[], b bytea, t text, id int PRIMARY KEY);
CREATE TABLE local2 (LIKE back2 INCLUDING ALL);
SQL

# Remote targets: the column t is t_remote there; on server b in schema other.
for my $node ($server_a, $server_b)
{
	on($node, <<'SQL');
CREATE TABLE dst (iv interval, id int PRIMARY KEY, t_remote text, b bytea, ta text[], ia int[], c pair, j jsonb,
                  n numeric, f4 real, f8 double precision, ts timestamp, tz timestamptz, m mood, d posint,
                  g int GENERATED ALWAYS AS (id * 2) STORED);
CREATE TABLE other.dst (LIKE dst INCLUDING ALL);
CREATE TABLE checked (id int, v int CHECK (v < 100));
INSERT INTO checked VALUES (0, 0);
CREATE TABLE people (id int, v text);
CREATE TABLE big (id bigint, payload text);
-- the remote role's own settings, which the copy must not depend on
DO $$ BEGIN
  EXECUTE format('ALTER ROLE %I SET timezone = %L', current_user, 'America/St_Johns');
  EXECUTE format('ALTER ROLE %I SET intervalstyle = iso_8601', current_user);
  EXECUTE format('ALTER ROLE %I SET datestyle = %L', current_user, 'SQL, DMY');
  EXECUTE format('ALTER ROLE %I SET extra_float_digits = 0', current_user);
  EXECUTE format('ALTER ROLE %I SET bytea_output = escape', current_user);
END $$;
SQL
}

on($coordinator,
	join('',
		map {
			my ($name, $node) = @$_;
			sprintf("CREATE SERVER %s FOREIGN DATA WRAPPER postgres_fdw
			             OPTIONS (host '%s', port '%d', dbname 'postgres', batch_size '100', fetch_size '1000');
			         CREATE USER MAPPING FOR CURRENT_USER SERVER %s;\n",
				$name, $node->host, $node->port, $name)
		} ([ a => $server_a ], [ b => $server_b ]))
	  . <<'SQL');
CREATE FOREIGN TABLE fa_dst (id int, t text OPTIONS (column_name 't_remote'), b bytea, ta text[], ia int[], c pair,
                             j jsonb, n numeric, f4 real, f8 double precision, ts timestamp, tz timestamptz,
                             iv interval, m mood, d posint, g int GENERATED ALWAYS AS (id * 2) STORED)
    SERVER a OPTIONS (table_name 'dst');
CREATE FOREIGN TABLE fb_dst (m mood, d posint, id int, t text OPTIONS (column_name 't_remote'), b bytea, ta text[],
                             ia int[], c pair, j jsonb, n numeric, f4 real, f8 double precision, ts timestamp,
                             tz timestamptz, iv interval)
    SERVER b OPTIONS (schema_name 'other', table_name 'dst');
CREATE FOREIGN TABLE fa_checked (id int, v int) SERVER a OPTIONS (table_name 'checked');
CREATE FOREIGN TABLE fa_people (id int, v text) SERVER a OPTIONS (table_name 'people');
CREATE FOREIGN TABLE fa_big (id bigint, payload text) SERVER a OPTIONS (table_name 'big');
CREATE FOREIGN TABLE fb_big (id bigint, payload text) SERVER b OPTIONS (table_name 'big');
SQL

# The digest of a table's rows: its count, and an MD5 of its rows' text
# under the same settings on every server.
my $same = "SET timezone = 'UTC'; SET datestyle = ISO; SET intervalstyle = postgres;
            SET extra_float_digits = 3; SET bytea_output = hex;";
my $cols = 'id, t, b, ta, ia, c, j, n, f4, f8, ts, tz, iv, m, d, g';
(my $remote_cols = $cols) =~ s/\bt\b/t_remote/;

sub digest
{
	my ($node, $table, $columns) = @_;
	return on($node,
		"$same SELECT count(*) || ' ' || md5(string_agg(row($columns)::text, ',' ORDER BY id)) FROM $table");
}
my $want = digest($coordinator, 'src', $cols);
like($want, qr/^8 [0-9a-f]{32}$/, 'the source digest');

# The calling session's settings differ from the remote role's and from the
# digest's; they are the same after the call.
my $odd = "SET timezone = 'Pacific/Chatham'; SET intervalstyle = sql_standard; SET datestyle = 'Postgres, DMY';
           SET extra_float_digits = -15; SET bytea_output = escape; SET search_path = other, public;";

sub copy_rows
{
	my ($from, $to) = @_;
	return result_or_error($coordinator, 'postgres',
		"$odd SELECT reshard_copy_rows('public.$from', 'public.$to');
		 SELECT current_setting('timezone'), current_setting('intervalstyle'), current_setting('extra_float_digits')");
}

my $settings = "Pacific/Chatham|sql_standard|-15";
is(copy_rows('src', 'fa_dst'), "8\n$settings", 'local to foreign: 8 rows, the settings kept');
is(digest($server_a, 'dst', $remote_cols), $want, 'local to foreign: the rows, exactly');
is(copy_rows('fa_dst', 'back2'), "8\n$settings", 'foreign to local: 8 rows');
is(digest($coordinator, 'back2', $cols), $want, 'foreign to local: the rows, exactly');
is(on($coordinator, "SELECT count(*) FROM back2 WHERE extra = 'x'"), '8', 'a default for a column not copied');
is(copy_rows('fa_dst', 'fb_dst'), "8\n$settings", 'foreign to foreign (two servers): 8 rows');
is(digest($server_b, 'other.dst', $remote_cols), $want, 'foreign to foreign: the rows, exactly (schema_name)');
is(copy_rows('src', 'local2'), "8\n$settings", 'local to local: 8 rows');
is(digest($coordinator, 'local2', $cols), $want, 'local to local: the rows, exactly');
is(on($coordinator, "SELECT count(*) FROM (SELECT $cols FROM back2 EXCEPT ALL SELECT $cols FROM src) AS x"),
	'0', 'copied back, EXCEPT ALL finds nothing');

# Only the source's own rows, not its children's; a remote source that is
# partitioned there: all its rows.
on($coordinator,
	"CREATE TABLE parent (id int, v text); CREATE TABLE child () INHERITS (parent);
	 INSERT INTO parent VALUES (1, 'parent'); INSERT INTO child VALUES (2, 'child');
	 CREATE TABLE got (id int, v text)");
is(copy_rows('parent', 'got'), "1\n$settings", 'a local source with a child: its own row');
is(on($coordinator, 'SELECT id, v FROM got'), '1|parent', 'only it');
on($server_a,
	"CREATE TABLE parted (id int, v text) PARTITION BY RANGE (id);
	 CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (10);
	 CREATE TABLE parted_2 PARTITION OF parted FOR VALUES FROM (10) TO (20);
	 INSERT INTO parted SELECT i, 'v' || i FROM generate_series(1, 19) AS i");
on($coordinator, "CREATE FOREIGN TABLE fa_parted (id int, v text) SERVER a OPTIONS (table_name 'parted'); TRUNCATE got");
is(copy_rows('fa_parted', 'got'), "19\n$settings", 'a remote source partitioned there: every row');
is(on($coordinator, "SELECT count(DISTINCT id), sum(id) FROM got"), '19|190', 'each once');

# Errors.
on($coordinator, "CREATE TABLE chk_src AS SELECT i AS id, i AS v FROM generate_series(1, 200) AS i");
like(copy_rows('chk_src', 'fa_checked'),
	qr/ERROR:  could not write rows on server "a" of target "fa_checked": new row for relation "checked" violates check constraint/,
	'a row the remote CHECK refuses: the remote error');
is(on($server_a, 'SELECT count(*) FROM checked'), '1', 'nothing committed remotely');
like(
	result_or_error(
		$coordinator, 'postgres',
		"DO \$\$ BEGIN PERFORM reshard_copy_rows('chk_src', 'fa_checked');
		 EXCEPTION WHEN check_violation THEN RAISE EXCEPTION 'caught %', SQLSTATE; END \$\$"),
	qr/ERROR:  caught 23514/, 'the remote SQLSTATE (check_violation)');

on($coordinator, "CREATE TABLE narrow (id int)");
like(copy_rows('chk_src', 'narrow'),
	qr/ERROR:  column "v" of source "chk_src" does not exist in target "narrow"/,
	'a column missing on the target');
on($coordinator,
	"CREATE FOREIGN DATA WRAPPER nofdw; CREATE SERVER nos FOREIGN DATA WRAPPER nofdw;
	 CREATE FOREIGN TABLE fn (id int, v int) SERVER nos");
like(copy_rows('chk_src', 'fn'),
	qr/ERROR:  target "fn" is a foreign table of server "nos" of foreign-data wrapper "nofdw", not of postgres_fdw/,
	'a foreign table of another wrapper');
like(
	result_or_error(
		$coordinator, 'postgres',
		"START TRANSACTION READ ONLY; SELECT reshard_copy_rows('chk_src', 'fa_checked')"),
	qr/ERROR:  cannot execute reshard_copy_rows\(\) in a read-only transaction/,
	'a read-only transaction: refused');
like(copy_rows('chk_src', 'chk_src'), qr/ERROR:  cannot copy the rows of "chk_src" into itself/, 'into itself');

# Roles that are not superusers: alice logs in to server a with her
# password; bob has no password in his mapping; dave has one, but server a
# does not ask it of him; carol may not read the source.
on($server_a,
	"CREATE ROLE alice LOGIN PASSWORD 'alice secret'; CREATE ROLE bob LOGIN; CREATE ROLE dave LOGIN;
	 GRANT INSERT ON people TO alice, bob, dave");
password_logins($server_a, 'alice');
on($coordinator,
	"CREATE TABLE src_people AS SELECT i AS id, 'person ' || i AS v FROM generate_series(1, 3) AS i;
	 CREATE ROLE alice; CREATE ROLE bob; CREATE ROLE carol; CREATE ROLE dave;
	 GRANT SELECT ON src_people TO alice, bob, dave;
	 GRANT INSERT ON fa_people TO alice, bob, carol, dave;
	 GRANT USAGE ON FOREIGN SERVER a TO alice, bob, carol, dave;
	 GRANT EXECUTE ON FUNCTION reshard_copy_rows(regclass, regclass) TO alice, bob, carol, dave;
	 CREATE USER MAPPING FOR alice SERVER a OPTIONS (user 'alice', password 'alice secret');
	 CREATE USER MAPPING FOR bob SERVER a OPTIONS (user 'bob');
	 CREATE USER MAPPING FOR carol SERVER a OPTIONS (user 'alice', password 'alice secret');
	 CREATE USER MAPPING FOR dave SERVER a OPTIONS (user 'dave', password 'not asked')");

sub copy_as
{
	my ($role) = @_;
	return result_or_error($coordinator, 'postgres',
		"SET ROLE $role; SELECT reshard_copy_rows('src_people', 'fa_people')");
}
like(copy_as('bob'), qr/ERROR:  password is required to connect to server "a" of target "fa_people"/,
	'no password in the mapping: refused');
like(copy_as('dave'),
	qr/ERROR:  password is required to connect to server "a" of target "fa_people"\nDETAIL:  Non-superuser cannot connect if the server does not request a password/,
	'a password the server does not ask: refused');
like(copy_as('carol'), qr/ERROR:  permission denied for table src_people/, 'no SELECT on the source: refused');
is(on($server_a, 'SELECT count(*) FROM people'), '0', 'none of them wrote');
is(copy_as('alice'), '3', 'a password (scram-sha-256): copied');
is(on($server_a, "SELECT string_agg(v, ',' ORDER BY id) FROM people"), 'person 1,person 2,person 3', 'her rows');
on($coordinator, "ALTER USER MAPPING FOR bob SERVER a OPTIONS (ADD password_required 'false')");
is(copy_as('bob'), '3', "password_required 'false', set by a superuser: copied");
like(
	result_or_error($coordinator, 'postgres', "SELECT reshard_copy_rows('src_people', 'fa_people')"),
	qr/^3$/, 'the superuser');

# A long copy.
on($coordinator,
	"CREATE TABLE big AS SELECT i::bigint AS id, repeat('p', 80) AS payload FROM generate_series(1, $BIG) AS i");

sub remote_sessions
{
	my ($node) = @_;
	return on($node, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'subsetting'");
}

like(
	result_or_error($coordinator, 'postgres', "SET statement_timeout = 200; SELECT reshard_copy_rows('big', 'fa_big')"),
	qr/ERROR:  canceling statement due to statement timeout/,
	'statement_timeout cancels the copy');
is(on($coordinator, 'SELECT 1'), '1', 'the coordinator answers');
ok($server_a->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'subsetting'"),
	'the remote session is gone');
is(on($server_a, 'SELECT count(*) FROM big'), '0', 'nothing committed remotely');

# Terminated while it copies.
my $h = start_sql($coordinator, "SELECT reshard_copy_rows('big', 'fa_big')");
ok($server_a->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'subsetting' AND query LIKE 'COPY%'"),
	'the copy runs');
on($coordinator,
	"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SELECT reshard_copy_rows(''big''%'");
my ($out, $err) = finish_sql($h);
like($err, qr/terminating connection due to administrator command/, 'terminated: the backend exits');
ok($coordinator->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE query LIKE 'SELECT reshard_copy_rows(''big''%'"),
	'the backend is gone');
ok($server_a->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'subsetting'"),
	'the remote session is gone');
is(on($server_a, 'SELECT count(*) FROM big'), '0', 'nothing committed remotely');

# Server b stopped while it takes the rows.
$h = start_sql($coordinator, "SELECT reshard_copy_rows('big', 'fb_big')");
ok($server_b->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'subsetting' AND query LIKE 'COPY%'"),
	'the copy runs');
$server_b->stop('fast');
($out, $err) = finish_sql($h);
note("the error: $err");
like($err, qr/ERROR:  could not \w+ [\w ]*on server "b" of target "fb_big"/, 'the server stopped: an error at once');
$server_b->start;
is(on($server_b, 'SELECT count(*) FROM big'), '0', 'nothing committed there');
is(on($coordinator, "SELECT reshard_copy_rows('big', 'fb_big')"), $BIG, 'called again: every row');
is(on($server_b, 'SELECT count(*), sum(id) FROM big'), "$BIG|" . ($BIG * ($BIG + 1) / 2), 'each once');

# The remote role's time limit and read-only default (as an application's
# role may have), which the copy must not depend on either: a copy longer
# than that limit, into a server where that role's transactions read only
# unless told otherwise.
on($server_a,
	"ALTER ROLE CURRENT_USER SET statement_timeout = '100ms';
	 ALTER ROLE CURRENT_USER SET default_transaction_read_only = on");
is(on($coordinator, "SELECT reshard_copy_rows('big', 'fa_big')"), $BIG,
	"a copy longer than the remote role's statement_timeout, into a server where it reads only by default");
is(on($server_a, "SET statement_timeout = 0; SELECT count(*), sum(id) FROM big"), "$BIG|" . ($BIG * ($BIG + 1) / 2),
	'each row once');
on($server_a,
	"SET default_transaction_read_only = off; ALTER ROLE CURRENT_USER RESET statement_timeout;
	 ALTER ROLE CURRENT_USER RESET default_transaction_read_only");

done_testing();
