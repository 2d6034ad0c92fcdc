# test/t/001_sharding_fdw.pl
#	Sharding across PostgreSQL servers, end to end: a coordinator and three
#	shard servers, a table on the coordinator partitioned BY LIST
#	(jumpbackhash(email, 3)) whose partitions are postgres_fdw foreign tables,
#	one on each shard.  Checks that rows inserted through the coordinator are
#	on the shard the function names, that a query for one key reads one shard
#	only, and then grows the table to a fourth shard with CALL
#	reshard_add_partition: only the rows whose bucket changes move, all to the
#	new shard, none is lost, duplicated or touched otherwise, also when a
#	shard makes a call fail half-way.  Then that a LATIN1 coordinator database
#	places text keys on UTF-8 shards where the shards compute them, that a
#	uuid key is placed and pruned alike, and that rows written straight to the
#	shards while a resharding runs are never lost.  Last, a table PARTITION BY
#	HASH (email jumpbackhash4_text_ops) over the four shards: rows land on the
#	shard of jumpbackhash(email, 4), and WHERE email = 'x' alone asks one
#	shard, at plan time and with a generic plan.
#
#	Uses only the public interface of resharding (reshard_add_partition,
#	reshard_check).  Nothing here waits for a time or counts what a process
#	managed to do in one: the writers on the shards stop when told, at known
#	points, and the checks are on the rows they were acknowledged.
#
# suite: sharding
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $ROWS = 30000;

my $coordinator = new_server('coordinator');
my @shards = map { new_server("shard$_") } 0 .. 3;

# attempt(NODE, SQL[, DATABASE]): runs SQL, returns (stdout, stderr) whether it fails or not.
sub attempt
{
	my ($node, $sql, $db) = @_;
	my ($out, $err);
	$node->psql($db // 'postgres', $sql, stdout => \$out, stderr => \$err);
	return ($out, $err);
}

# The shard that holds KEY in TABLE (column COLUMN), asked of the shards themselves.
sub shard_of
{
	my ($table, $column, $key) = @_;
	my @home = grep {
		on($shards[$_], "SELECT count(*) FROM $table WHERE $column = '$key'") eq '1'
	} 0 .. 3;
	return join(' ', @home);
}

# shards_reached(KEY, SQL): runs SQL on the coordinator and returns the
# shards whose log shows a statement with KEY in it, from what they logged
# while it ran (every statement is logged: log_statement = all).
sub shards_reached
{
	my ($key, $sql) = @_;
	my @sizes = map { -s $_->logfile } @shards;
	on($coordinator, $sql);
	return join('',
		map { "$_ " }
		  grep { index(slurp_file($shards[$_]->logfile, $sizes[$_]), $key) >= 0 }
		  0 .. 3);
}

# The foreign servers of shards 0-3 and their user mappings, for a database
# of the coordinator.
sub foreign_servers
{
	my (%options) = @_;
	my $sql = '';
	for my $i (0 .. 3)
	{
		my $extra = join('', map { ", $_ '$options{$_}'" } sort keys %options);
		$sql .= sprintf(
			"CREATE SERVER shard_%d FOREIGN DATA WRAPPER postgres_fdw
			     OPTIONS (host '%s', port '%d', dbname 'postgres', extensions 'subsetting'%s);
			 CREATE USER MAPPING FOR CURRENT_USER SERVER shard_%d;\n",
			$i, $shards[$i]->host, $shards[$i]->port, $extra, $i);
	}
	return $sql;
}

# --- Set-up: a users table on each shard, the partitioned table on the coordinator.
for my $shard (@shards)
{
	on($shard,
		"CREATE EXTENSION subsetting;
		 CREATE TABLE users (email text PRIMARY KEY, name text NOT NULL, visits int NOT NULL)");
}
# extensions 'subsetting': jumpbackhash may run on the shard, so a filter on
# it is sent there; batch_size: inserts go to the shards 1000 rows at a time.
on($coordinator,
	"CREATE EXTENSION subsetting; CREATE EXTENSION postgres_fdw;\n"
	  . foreign_servers(batch_size => 1000)
	  . "CREATE TABLE users (email text NOT NULL, name text NOT NULL, visits int NOT NULL)
	         PARTITION BY LIST (jumpbackhash(email, 3));\n"
	  . join('',
		map { "CREATE FOREIGN TABLE users_$_ PARTITION OF users FOR VALUES IN ($_)
		           SERVER shard_$_ OPTIONS (table_name 'users');\n" } 0 .. 2));

# --- Rows inserted through the coordinator land on the shard jumpbackhash names.
my ($out, $err) = attempt($coordinator,
	"INSERT INTO users SELECT 'user' || i || '\@example.com', 'User ' || i, i % 100
	 FROM generate_series(1, $ROWS) AS i");
is($err, '', "insert $ROWS rows through the coordinator");
my $total = 0;
for my $i (0 .. 2)
{
	my $n = on($shards[$i], "SELECT count(*) FROM users");
	$total += $n;
	# 10000 expected, binomial standard deviation 82: within 5 of them.
	ok($n > 9590 && $n < 10410, "shard $i holds about a third of the rows ($n)");
	is(on($shards[$i], "SELECT count(*) FROM users WHERE jumpbackhash(email, 3) <> $i"),
		'0', "every row on shard $i has jumpbackhash(email, 3) = $i, computed on the shard");
}
is($total, $ROWS, "the shards hold every row once");
is(on($coordinator, "SELECT count(*) FROM users"), $ROWS, "the coordinator sees every row");

# --- A query for one key: pruned to one foreign scan, and only that shard asked.
my $key = 'user4242@example.com';
my $home = shard_of('users', 'email', $key);
like($home, qr/^[0-2]$/, "$key is on one shard ($home)");
my $query = "SELECT * FROM users WHERE jumpbackhash(email, 3) = jumpbackhash('$key', 3) AND email = '$key'";
my $plan = on($coordinator, "EXPLAIN (COSTS OFF, VERBOSE) $query");
is(join(' ', $plan =~ /Foreign Scan on ([a-z_.0-9]+)/g),
	"public.users_$home", "EXPLAIN shows one foreign scan, of users_$home");
like($plan, qr/Remote SQL: .* WHERE .*email = '\Q$key\E'/, "the key's condition is sent to the shard");
is(on($coordinator, $query), "$key|User 4242|42", "the query returns the row");
is(shards_reached($key, $query), "$home ", "only shard $home receives the query");

# The same with a parameter and a generic plan: pruned when execution starts.
my $prepared = "SET plan_cache_mode = force_generic_plan;
	PREPARE one_user(text) AS
	    SELECT * FROM users WHERE jumpbackhash(email, 3) = jumpbackhash(\$1, 3) AND email = \$1;";
like(on($coordinator, "$prepared EXPLAIN (COSTS OFF) EXECUTE one_user('$key')"),
	qr/Subplans Removed: 2/, "a generic plan removes the other two shards at start-up");
is(shards_reached($key, "$prepared EXECUTE one_user('$key')"), "$home ", "and asks only shard $home");

# What pruning cannot do: from the key alone, every shard is asked.
$plan = on($coordinator, "EXPLAIN (COSTS OFF) SELECT * FROM users WHERE email = '$key'");
is(scalar(() = $plan =~ /Foreign Scan on/g), 3, "WHERE email = ... alone scans all three shards");
is(shards_reached($key, "SELECT * FROM users WHERE email = '$key'"), "0 1 2 ", "and asks all three");

# --- Resharding 3 -> 4.
on($coordinator,
	"CREATE FOREIGN TABLE users_3 (email text NOT NULL, name text NOT NULL, visits int NOT NULL)
	 SERVER shard_3 OPTIONS (table_name 'users')");
my $checksum = "SELECT count(*) || ' ' || md5(string_agg(u::text, ',' ORDER BY email)) FROM users AS u";
my $checksum_before = on($coordinator, $checksum);
my $children = "SELECT string_agg(inhrelid::regclass || '=' || inhrelid::oid, ' ' ORDER BY 1)
                FROM pg_inherits WHERE inhparent = 'users'::regclass";
my $oids_before = on($coordinator, $children);

# The row versions on each shard, email => "xmin ctid" (a row that is
# rewritten gets a new xmin).
sub row_versions
{
	my ($shard) = @_;
	my %versions = map { split(/\|/, $_, 2) }
	  split(/\n/, on($shard, "SELECT email, xmin || ' ' || ctid FROM users"));
	return \%versions;
}
my @before = map { row_versions($_) } @shards;
my $modulo_moves = on($coordinator,
	"SELECT count(*) FROM users WHERE abs(xxh3_64(email) % 3) <> abs(xxh3_64(email) % 4)");

# The copy filters on the shards: only the rows that move cross the network.
like(on($coordinator, "EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM users_0 WHERE jumpbackhash(email, 4) = 3"),
	qr/Remote SQL: SELECT .* WHERE .*jumpbackhash\(email, 4\) = 3/,
	"the filter jumpbackhash(email, 4) = 3 runs on the shard");

# A failure in the procedure's first transaction (the copy), made by a
# trigger on shard 3: nothing changes anywhere.
on($shards[3],
	"CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
	     \$\$ BEGIN RAISE EXCEPTION 'shard 3 refuses inserts'; END \$\$;
	 CREATE TRIGGER refuse BEFORE INSERT ON users FOR EACH ROW EXECUTE FUNCTION refuse()");
($out, $err) = attempt($coordinator, "CALL reshard_add_partition('users', 'users_3')");
like($err, qr/shard 3 refuses inserts/, "CALL reshard_add_partition fails when shard 3 refuses the copy");
is(on($coordinator, "SELECT pg_get_partkeydef('users'::regclass)") . ' '
	  . on($shards[3], "SELECT count(*) FROM users"),
	"LIST (jumpbackhash(email, 3)) 0",
	"after that failure the table still has three buckets, and shard 3 no row");
on($shards[3], "DROP TRIGGER refuse ON users");

# hold(TABLE): a coordinator session that holds TABLE as a long reader does
# (without opening a transaction on the shards) until release(SESSION).
sub hold
{
	my ($table) = @_;
	my $session = background_session($coordinator);
	session_query($session, "BEGIN; LOCK TABLE $table IN ACCESS SHARE MODE");
	return $session;
}

sub release
{
	my ($session) = @_;
	session_query($session, "COMMIT");
	$session->quit;
}

# Returns once a backend waits for a lock on TABLE (the resharding, at its swap).
sub wait_for_lock_wait
{
	my ($table) = @_;
	wait_until($coordinator, "SELECT count(*) >= 1 FROM pg_locks WHERE relation = '$table'::regclass AND NOT granted",
		"a backend to wait for a lock on $table");
}

# A failure in the swap (the procedure's second transaction), made by shard
# 1 losing its table while the swap waits for a long reader: the table is
# as it was, three buckets, the copies on shard 3 deleted, every row there.
# (The swap's one attempt waits for the reader until the test releases
# it: its budget is as long as a wait of the test's, $WAIT_BUDGET.)
my $holder = hold('users');
my $reshard = start_sql($coordinator,
	"CALL reshard_add_partition('users', 'users_3', cutover_budget => '$WAIT_BUDGET', cutover_attempts => 1)");
wait_for_lock_wait('users');
like(on($shards[3], "SELECT count(*) FROM users"), qr/^[1-9][0-9]*$/,
	"the copy is done while the reader holds the table: shard 3 holds copies");
on($shards[1], "ALTER TABLE users RENAME TO users_away");
release($holder);
($out, $err) = finish_sql($reshard);
like($err, qr/relation "public.users" does not exist/,
	"CALL reshard_add_partition fails in the swap when shard 1 fails");
on($shards[1], "ALTER TABLE users_away RENAME TO users");
is(on($coordinator, "SELECT pg_get_partkeydef('users'::regclass)") . ' '
	  . on($shards[3], "SELECT count(*) FROM users") . ' '
	  . on($coordinator, $checksum),
	"LIST (jumpbackhash(email, 3)) 0 $checksum_before",
	"after that failure the table still has three buckets, shard 3 no row (copies deleted), every row there");

# A failure in the cutover, made by a trigger on shard 2 that refuses the
# deletes of the rows that move: the call undoes itself, the table is as it
# was.  The keys of those rows go to the shard as a parameter, not in the
# statement's text (which errors and logs would repeat).
on($shards[2],
	"CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
	     \$\$ BEGIN RAISE EXCEPTION 'shard 2 refuses deletes'; END \$\$;
	 CREATE TRIGGER refuse BEFORE DELETE ON users FOR EACH ROW EXECUTE FUNCTION refuse()");
($out, $err) = attempt($coordinator, "CALL reshard_add_partition('users', 'users_3')");
like($err, qr/shard 2 refuses deletes/, "CALL reshard_add_partition fails when shard 2 refuses the deletes");
unlike($err, qr/user[0-9]+\@example\.com/, "and the error does not list the keys of the rows that move");
is(on($coordinator, "SELECT pg_get_partkeydef('users'::regclass)") . ' '
	  . on($shards[3], "SELECT count(*) FROM users") . ' '
	  . on($coordinator, $checksum),
	"LIST (jumpbackhash(email, 3)) 0 $checksum_before",
	"after that failure the table still has three buckets, shard 3 no row, every row there");
on($shards[2], "DROP TRIGGER refuse ON users");

# A failure at the COMMIT of the cutover, on shard 2 (a deferred trigger):
# postgres_fdw commits the shards one after the other, so shards 0 and 1 may
# have committed their deletes before shard 2 failed; the undo adds those
# rows back from their copies.  Either way the table is as it was.  (A
# budget no loaded machine overruns: what is tested is the COMMIT's failure,
# not an attempt cancelled by its budget, which the next case tests.)
on($shards[2],
	"CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER DELETE ON users
	     DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse()");
($out, $err) = attempt($coordinator, "CALL reshard_add_partition('users', 'users_3', cutover_budget => '30 s')");
like($err, qr/shard 2 refuses deletes/, "CALL reshard_add_partition fails when shard 2 fails at COMMIT");
note($err =~ /added back to/
	? "shards committed before shard 2 failed: their rows were added back"
	: "shard 2 failed first: nothing was committed on the shards");
is(on($coordinator, "SELECT pg_get_partkeydef('users'::regclass)") . ' '
	  . on($shards[3], "SELECT count(*) FROM users") . ' '
	  . on($coordinator, $checksum),
	"LIST (jumpbackhash(email, 3)) 0 $checksum_before",
	"after a failed COMMIT the table still has three buckets, shard 3 no row, every row there");
for my $i (0 .. 2)
{
	is(on($shards[$i], "SELECT count(*) FROM users WHERE jumpbackhash(email, 3) <> $i"),
		'0', "shard $i holds only its bucket's rows");
}
on($shards[2], "DROP TRIGGER refuse_at_commit ON users");

# A shard whose deletes wait at the cutover (a session on shard 2 holds a
# row that moves): the attempt is cancelled when its budget is spent, not
# when the shard answers (it would wait as long as that session), and the
# call fails as over budget, the table as it was; out of attempts, it keeps
# its work (shard 3 holds the copies of the rows of bucket 3), and calling
# again finishes it.
#
# From here on, shard 3 counts the INSERT statements it runs: the copy sends
# the rows that move in batches (reshard_transfer_table), not one statement
# per row.  (postgres_fdw runs them with search_path pg_catalog.)
my $count_statements = "CREATE TABLE insert_statements (n int);
	CREATE FUNCTION count_statement() RETURNS trigger LANGUAGE plpgsql AS
	    \$\$ BEGIN INSERT INTO public.insert_statements VALUES (1); RETURN NULL; END \$\$;
	CREATE TRIGGER count_statement AFTER INSERT ON users FOR EACH STATEMENT EXECUTE FUNCTION count_statement()";
on($shards[3], $count_statements);
my $row_holder = background_session($shards[2]);
session_query($row_holder, "BEGIN; SELECT 1 FROM users WHERE jumpbackhash(email, 4) = 3 LIMIT 1 FOR UPDATE");
($out, $err) = attempt($coordinator,
	"CALL reshard_add_partition('users', 'users_3', cutover_budget => '500 ms', cutover_attempts => 1)");
like($err, qr/could not cut public\.users over within 500 ms in 1 attempts.*\n.*the cutover overran its budget/,
	"a cutover that waits on a shard is cancelled when its budget is spent");
session_query($row_holder, "COMMIT");
$row_holder->quit;
my $bucket_3 = on($coordinator, "SELECT count(*) FROM users WHERE jumpbackhash(email, 4) = 3");
is(on($coordinator, "SELECT pg_get_partkeydef('users'::regclass)") . ' '
	  . on($shards[3], "SELECT count(*) FROM users") . ' '
	  . on($coordinator, $checksum) . ' '
	  . on($coordinator, "SELECT phase || ' ' || interrupted FROM reshard_progress WHERE \"table\" = 'public.users'"),
	"LIST (jumpbackhash(email, 3)) $bucket_3 $checksum_before cutover true",
	"after that the table still has three buckets, every row there; shard 3 holds the copies of bucket 3, kept");
my $moved = on($coordinator, "CALL reshard_add_partition('users', 'users_3')");
like($moved, qr/^[1-9][0-9]*$/, "called again, it finishes ($moved rows moved)");

my $statements = on($shards[3], "SELECT count(*) FROM insert_statements");
ok($statements > 0 && $statements * 100 <= $moved,
	"the rows that move reach shard 3 in batches ($moved rows, $statements INSERT statements)");
on($shards[3], "DROP TRIGGER count_statement ON users; DROP TABLE insert_statements; DROP FUNCTION count_statement()");

my @after = map { row_versions($_) } @shards;
# Moved: on shard 0..2 before, not after.
my %moved_keys;
for my $i (0 .. 2)
{
	$moved_keys{$_} = 1 for grep { !exists $after[$i]{$_} } keys %{ $before[$i] };
	my @changed = grep {
		!defined $before[$i]{$_} || $before[$i]{$_} ne $after[$i]{$_}
	} keys %{ $after[$i] };
	is(scalar @changed, 0, "shard $i: the rows that stay are untouched (same xmin and ctid)");
}
my $actually_moved = keys %moved_keys;
is($moved, $actually_moved, "the procedure reports the rows that left shards 0-2");
is(join(',', sort keys %{ $after[3] }), join(',', sort keys %moved_keys), "shard 3 holds exactly the moved rows");
# A quarter of 30000 is 7500, with a binomial standard deviation of 75:
# within four of them (300).  hash % n would move three quarters (22500).
note "moved by jumpbackhash: $actually_moved of $ROWS; by hash % n: $modulo_moves of $ROWS";
ok($actually_moved >= 7200 && $actually_moved <= 7800,
	"about a quarter of the rows moved ($actually_moved, 7500 +- 300)");
ok($modulo_moves >= 22200 && $modulo_moves <= 22800,
	"hash % n would have moved about three quarters ($modulo_moves, 22500 +- 300)");
is(on($coordinator, $checksum), $checksum_before, "no row lost, duplicated or changed (count and checksum)");
for my $i (0 .. 3)
{
	is(on($shards[$i], "SELECT count(*) FROM users WHERE jumpbackhash(email, 4) <> $i"),
		'0', "every row on shard $i has jumpbackhash(email, 4) = $i");
}

# The parent is new, over the same foreign tables and the new one.
is(on($coordinator, "SELECT pg_get_partkeydef('users'::regclass)"),
	"LIST (jumpbackhash(email, 4))", "the coordinator's table is partitioned by jumpbackhash(email, 4)");
is(on($coordinator, "$children AND inhrelid <> 'users_3'::regclass"),
	$oids_before, "over the same three foreign tables, and users_3");
$key = (sort keys %moved_keys)[0];
is(shards_reached($key,
		"SELECT email FROM users WHERE jumpbackhash(email, 4) = jumpbackhash('$key', 4) AND email = '$key'"),
	"3 ", "a moved key is found on shard 3 only");
is(on($coordinator,
		"INSERT INTO users SELECT 'new' || i || '\@example.com', 'New', 0 FROM generate_series(1, 400) AS i;
		 SELECT count(DISTINCT tableoid) FROM users WHERE name = 'New'"),
	'4', "inserts go to four shards");

# --- A LATIN1 coordinator database over the same UTF-8 shards: xxh3_64
# hashes text as UTF-8 in every database, so the coordinator and the shards
# agree on the bucket of every key, accents included.
on($coordinator, "CREATE DATABASE latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
on($_, "CREATE TABLE people (name text PRIMARY KEY)") for @shards;
on($coordinator,
	"CREATE EXTENSION subsetting; CREATE EXTENSION postgres_fdw;\n"
	  . foreign_servers()
	  . "CREATE TABLE people (name text NOT NULL) PARTITION BY LIST (jumpbackhash(name, 4));\n"
	  . join('',
		map { "CREATE FOREIGN TABLE people_$_ PARTITION OF people FOR VALUES IN ($_)
		           SERVER shard_$_ OPTIONS (table_name 'people');\n" } 0 .. 3),
	'latin1');
# chr(233) is 'é' in both encodings (a LATIN1 byte, a Unicode code point).
my $names = "SELECT 'J' || chr(233) || 'r' || chr(244) || 'me M' || chr(252) || 'ller-' || chr(199) || 'elik ' || i
	FROM generate_series(1, 2000) AS i";
($out, $err) = attempt($coordinator, "INSERT INTO people $names", 'latin1');
is($err, '', "the LATIN1 database inserts 2000 accented names through the coordinator");
$total = 0;
for my $i (0 .. 3)
{
	$total += on($shards[$i], "SELECT count(*) FROM people");
	is(on($shards[$i], "SELECT count(*) FROM people WHERE jumpbackhash(name, 4) <> $i"),
		'0', "UTF-8 shard $i agrees with the LATIN1 coordinator on every name's bucket");
}
is($total, 2000, "the shards hold the 2000 names");
is(on($shards[0], "SELECT count(*) FROM people WHERE name NOT IN ($names)"),
	'0', "as the same text (every name on shard 0 is one of those inserted)");
# Hashing the LATIN1 bytes instead would have put most names elsewhere.
my $wrong = on($coordinator,
	"SELECT count(*) FROM people WHERE jumpbackhash(convert_to(name, 'LATIN1'), 4) <> jumpbackhash(name, 4)",
	'latin1');
ok($wrong > 1000, "hashing the LATIN1 bytes would misplace most names ($wrong of 2000)");

# --- A uuid key over the four shards: rows placed by jumpbackhash(uuid, 4),
# a prepared statement with a uuid parameter pruned to one shard.
on($_, "CREATE TABLE sessions (id uuid PRIMARY KEY, started int NOT NULL)") for @shards;
on($coordinator,
	"CREATE TABLE sessions (id uuid NOT NULL, started int NOT NULL) PARTITION BY LIST (jumpbackhash(id, 4));\n"
	  . join('',
		map { "CREATE FOREIGN TABLE sessions_$_ PARTITION OF sessions FOR VALUES IN ($_)
		           SERVER shard_$_ OPTIONS (table_name 'sessions');\n" } 0 .. 3)
	  . "INSERT INTO sessions SELECT md5(i::text)::uuid, i FROM generate_series(1, 4000) AS i");
$total = 0;
for my $i (0 .. 3)
{
	$total += on($shards[$i], "SELECT count(*) FROM sessions");
	is(on($shards[$i], "SELECT count(*) FROM sessions WHERE jumpbackhash(id, 4) <> $i"),
		'0', "every session on shard $i has jumpbackhash(id, 4) = $i");
}
is($total, 4000, "the shards hold the 4000 sessions");
$key = on($coordinator, "SELECT md5('42')::uuid");
$home = shard_of('sessions', 'id', $key);
$prepared = "SET plan_cache_mode = force_generic_plan;
	PREPARE one_session(uuid) AS
	    SELECT started FROM sessions WHERE jumpbackhash(id, 4) = jumpbackhash(\$1, 4) AND id = \$1;";
like(on($coordinator, "$prepared EXPLAIN (COSTS OFF) EXECUTE one_session('$key')"),
	qr/Subplans Removed: 3/, "a uuid parameter prunes three of the four shards");
is(shards_reached($key, "$prepared EXECUTE one_session('$key')"), "$home ",
	"and asks only shard $home, which has the row");

# --- Direct writers: rows written straight to the shards while a
# resharding runs (by writers that place rows by the old bucket count, as
# the coordinator did) are never lost.  The engine does not see them (they
# go around the coordinator): a row of the new bucket written on a shard
# before the verification makes the call fail and undo itself, one written
# after it stays where it was written and the call warns of it.  Which of
# the two happens depends on timing; either way every acknowledged row is
# there once, and once the writers stop, calling again finishes.
#
# A writer is a procedure on shard 0 or 1 that inserts the rows of its
# bucket one at a time, each in a transaction of its own that also logs the
# id in writer_log: a row is acknowledged when its transaction commits.  It
# stops when a row appears in writer_stop, or after max_rows rows.
for my $i (0 .. 2)
{
	on($shards[$i], "CREATE TABLE events (id bigint NOT NULL, payload text)");
}
for my $i (0 .. 1)
{
	on($shards[$i], q{
		CREATE TABLE writer_log (id bigint PRIMARY KEY);
		CREATE TABLE writer_stop (stop boolean);
		CREATE PROCEDURE write_events(bucket int, first_id bigint, max_rows int)
		LANGUAGE plpgsql AS $$
		DECLARE
		    next_id bigint := first_id;
		    written int := 0;
		BEGIN
		    WHILE written < max_rows AND NOT EXISTS (SELECT FROM writer_stop) LOOP
		        IF jumpbackhash(next_id, 2) = bucket THEN
		            INSERT INTO events VALUES (next_id, 'background');
		            INSERT INTO writer_log VALUES (next_id);
		            COMMIT;
		            written := written + 1;
		            PERFORM pg_sleep(0.002);  -- a steady trickle, not a flood
		        END IF;
		        next_id := next_id + 1;
		    END LOOP;
		END
		$$});
}
on($coordinator,
	"CREATE TABLE events (id bigint NOT NULL, payload text) PARTITION BY LIST (jumpbackhash(id, 2));
	 CREATE FOREIGN TABLE events_0 PARTITION OF events FOR VALUES IN (0) SERVER shard_0 OPTIONS (table_name 'events');
	 CREATE FOREIGN TABLE events_1 PARTITION OF events FOR VALUES IN (1) SERVER shard_1 OPTIONS (table_name 'events');
	 CREATE FOREIGN TABLE events_2 (id bigint NOT NULL, payload text) SERVER shard_2 OPTIONS (table_name 'events');
	 INSERT INTO events SELECT i, 'e' || i FROM generate_series(1, 10000) AS i;
	 CREATE TABLE events_truth AS SELECT * FROM events");

# acked(I): how many rows the writer on shard I has been acknowledged.
sub acked
{
	my ($i) = @_;
	return on($shards[$i], "SELECT count(*) FROM writer_log");
}

# wait_for_acked(I, N): returns once the writer on shard I has N rows acknowledged.
sub wait_for_acked
{
	my ($i, $n) = @_;
	wait_until($shards[$i], "SELECT count(*) >= $n FROM writer_log", "the writer on shard $i to be acknowledged $n rows");
}

my @writers = map { start_sql($shards[$_], "CALL write_events($_, 200000, 1000000)") } 0 .. 1;
wait_for_acked($_, 10) for 0 .. 1;
my @acked_before = map { acked($_) } 0 .. 1;
($out, $err) = attempt($coordinator, "CALL reshard_add_partition('events', 'events_2')");
my $first_call = $err =~ /ERROR/ ? 'failed' : 'succeeded';
note "the first call $first_call while the writers wrote: $err";
ok($err !~ /ERROR/ || $err =~ /differ from their copies|were changed on its server/,
	"a call under direct writers succeeds or fails because of them, nothing else");
wait_for_acked($_, acked($_) + 10) for 0 .. 1;
for my $i (0 .. 1)
{
	on($shards[$i], "INSERT INTO writer_stop VALUES (true)");
	($out, $err) = finish_sql($writers[$i]);
	is($err, '', "the writer on shard $i stops when told, without an error");
}
my $during = acked(0) + acked(1) - $acked_before[0] - $acked_before[1];
ok($during >= 20, "the writers were acknowledged rows during the resharding ($during)");
($out, $err) = attempt($coordinator, "CALL reshard_add_partition('events', 'events_2')");
unlike($err, qr/ERROR/, "called again once the writers stopped, it finishes");
is(on($coordinator, "SELECT pg_get_partkeydef('events'::regclass)"), 'LIST (jumpbackhash(id, 3))',
	"the table has three buckets");
my $misplaced = on($coordinator, "SELECT coalesce(sum(misplaced_rows), 0) FROM reshard_check('events')");
my $independent = 0;
$independent += on($shards[$_], "SELECT count(*) FROM events WHERE jumpbackhash(id, 3) <> $_") for 0 .. 2;
is($misplaced, $independent, "reshard_check counts the rows written directly in the wrong shard ($misplaced)");
my $acked_ids = join(',', map { split /\n/, on($shards[$_], "SELECT id FROM writer_log") } 0 .. 1);
on($coordinator, "CREATE TABLE acked AS SELECT unnest('{$acked_ids}'::bigint[]) AS id");
is(on($coordinator,
		"SELECT (SELECT count(*) FROM (SELECT id, payload FROM events_truth
		                               UNION ALL SELECT id, 'background' FROM acked
		                               EXCEPT ALL SELECT id, payload FROM events) AS lost)
		        || ' ' || (SELECT count(*) FROM (SELECT id, payload FROM events
		                                         EXCEPT ALL (SELECT id, payload FROM events_truth
		                                                     UNION ALL SELECT id, 'background' FROM acked)) AS extra)"),
	"0 0",
	"every row the coordinator had and every row written directly and acknowledged is there, once");
is(on($coordinator,
		"SELECT count(*) FROM pg_class WHERE relname ~ '^reshard_(shadow|incoming|parent|log|key)_'")
	  . ' ' . on($coordinator, "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'reshard%'"),
	'0 0', "nothing of the engine is left");

# --- PARTITION BY HASH with the operator class jumpbackhash4_text_ops: the
# partition of REMAINDER b holds the keys with jumpbackhash(email, 4) = b, so
# the planner prunes on the key itself.
on($_, "CREATE TABLE members (email text PRIMARY KEY, name text NOT NULL)") for @shards;
on($coordinator,
	"CREATE TABLE members (email text NOT NULL, name text NOT NULL)
	     PARTITION BY HASH (email jumpbackhash4_text_ops);\n"
	  . join('',
		map { "CREATE FOREIGN TABLE members_$_ PARTITION OF members FOR VALUES WITH (MODULUS 4, REMAINDER $_)
		           SERVER shard_$_ OPTIONS (table_name 'members');\n" } 0 .. 3));
is(on($coordinator, "SELECT count(*) FROM jumpbackhash_partitioning_problems('members')"),
	'0', "jumpbackhash_partitioning_problems finds none");
($out, $err) = attempt($coordinator,
	"INSERT INTO members SELECT 'member' || i || '\@example.com', 'Member ' || i FROM generate_series(1, 8000) AS i");
is($err, '', "insert 8000 members through the coordinator");
$total = 0;
for my $i (0 .. 3)
{
	$total += on($shards[$i], "SELECT count(*) FROM members");
	is(on($shards[$i], "SELECT count(*) FROM members WHERE jumpbackhash(email, 4) <> $i"),
		'0', "every member on shard $i has jumpbackhash(email, 4) = $i, computed on the shard");
}
is($total, 8000, "the shards hold the 8000 members");
$key = 'member4242@example.com';
$home = shard_of('members', 'email', $key);
is($home, on($coordinator, "SELECT jumpbackhash('$key'::text, 4)"), "$key is on shard jumpbackhash('$key', 4)");
$query = "SELECT * FROM members WHERE email = '$key'";
$plan = on($coordinator, "EXPLAIN (COSTS OFF, VERBOSE) $query");
is(join(' ', $plan =~ /Foreign Scan on ([a-z_.0-9]+)/g),
	"public.members_$home", "EXPLAIN of WHERE email = ... alone shows one foreign scan, of members_$home");
is(on($coordinator, $query), "$key|Member 4242", "the query returns the row");
is(shards_reached($key, $query), "$home ", "only shard $home receives it");
$prepared = "SET plan_cache_mode = force_generic_plan;
	PREPARE one_member(text) AS SELECT * FROM members WHERE email = \$1;";
like(on($coordinator, "$prepared EXPLAIN (COSTS OFF) EXECUTE one_member('$key')"),
	qr/Subplans Removed: 3/, "a generic plan removes the other three shards at start-up");
is(shards_reached($key, "$prepared EXECUTE one_member('$key')"), "$home ", "and asks only shard $home");
is(shards_reached($key, "UPDATE members SET name = 'Renamed' WHERE email = '$key'"),
	"$home ", "an update of the name goes to shard $home only");

# --- Removing shard 3 of users (4 -> 3 buckets): its rows go back to shards
# 0-2, poured into them at the cutover, in batches there too, also from
# servers whose batch_size is postgres_fdw's default (1: a row per statement).
on($shards[$_], $count_statements) for 0 .. 2;
on($coordinator, "ALTER SERVER shard_$_ OPTIONS (DROP batch_size)") for 0 .. 3;
$checksum_before = on($coordinator, $checksum);
# (a budget of a minute: without shard_views the cutover writes the rows
# into the shards under its lock, which takes as long as the machine takes;
# the defaults under load are measured by test/bench/reshard_stall, not here)
($moved, $err) = attempt($coordinator, "CALL reshard_remove_partition('users', 'users_3', cutover_budget => '1 min')");
unlike($err, qr/ERROR/, "removing shard 3 succeeds");
# (shard_views by default where the shards allow it: not here, and it says why)
like($err, qr/NOTICE:  resharding public\.users without shard_views: extension dblink is not installed\n/,
	"without dblink, the call does without shard_views and says why");
is(on($coordinator, "SELECT pg_get_partkeydef('users'::regclass)") . ' ' . on($coordinator, $checksum),
	"LIST (jumpbackhash(email, 3)) $checksum_before",
	"removing shard 3: three buckets, no row lost, duplicated or changed ($moved rows moved)");
$statements = 0;
for my $i (0 .. 2)
{
	$statements += on($shards[$i], "SELECT count(*) FROM insert_statements");
	is(on($shards[$i], "SELECT count(*) FROM users WHERE jumpbackhash(email, 3) <> $i"),
		'0', "every row on shard $i has jumpbackhash(email, 3) = $i");
}
ok($statements > 0 && $statements * 100 <= $moved,
	"the rows of shard 3 reach shards 0-2 in batches ($moved rows, $statements INSERT statements)");

done_testing();
