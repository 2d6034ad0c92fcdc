# test/perl/SubsettingTest.pm
#	What the TAP tests of test/t/ share: their servers, made one way, a
#	table sharded over servers with postgres_fdw, a query whose error is a
#	result to check, what a resharding must not leave, SQL run (on) or run in
#	the background, moves cut short (cut_call), and waits.
#	Waits: a test waits for each thing at most
#	$PostgreSQL::Test::Utils::timeout_default seconds (PG_TEST_TIMEOUT_DEFAULT,
#	180 by default: what PostgreSQL's own tests wait), counted from the
#	moment it starts waiting for it, so that a busy machine only makes it
#	slower; a wait that runs out dies naming what it waited for
#	(timed_out).  What runs in the background (start_sql, start_writer_loops,
#	close_gate, background_session) may run as long as the test goes on
#	meanwhile: only the waits for it are timed.
#	A test loads it with
#		use FindBin;
#		use lib "$FindBin::RealBin/../perl";
#		use SubsettingTest;
#	and one with an on() of its own leaves the module's out:
#		use SubsettingTest qw(:DEFAULT !on);
package SubsettingTest;

use strict;
use warnings FATAL => 'all';

use Carp;
use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(on new_server shard_table result_or_error start_sql finish_sql $ENGINE_LEFTOVERS engine_leftovers_but
  inactive_triggers_heard wait_for_restart start_writer_loops stop_writer_loops $CUT_AT password_logins
  mirrored_writers items_equal_mirror close_gate open_gate watch_and_cut end_watch cut_call link_servers
  grant_columns_of_new_tables timed_out wait_until wait_while_running background_session session_query call_until_done again_with_larger_budget
  ran_out_of_attempts $WAIT_BUDGET start_pgbench_loop start_calls_until_done finish_calls
  atomic_commit_cluster);

# on(NODE, SQL[, DATABASE]): runs SQL (in the database postgres by
# default), returns its result unaligned; dies on error.
sub on
{
	my ($node, $sql, $db) = @_;
	return $node->safe_psql($db // 'postgres', $sql);
}

# timed_out(WHAT[, SECONDS]): what a wait for WHAT that ran out says
# (after SECONDS, by default the test's timeout).
sub timed_out
{
	my ($what, $seconds) = @_;
	return 'timed out after ' . ($seconds // $PostgreSQL::Test::Utils::timeout_default) . " s waiting for $what";
}

# wait_until(NODE, QUERY, WHAT): returns once QUERY, run again and again
# on NODE (poll_query_until), gives true; dies with timed_out(WHAT) if it
# does not in time.
sub wait_until
{
	my ($node, $query, $what) = @_;
	$node->poll_query_until('postgres', $query) or Carp::croak(timed_out($what));
	return;
}

# wait_while_running(NODE, QUERY, WHAT, HANDLE): as wait_until, while
# HANDLE's process (start_sql) runs: if it ends first, dies with what it
# said (the call that was to get there failed).  QUERY runs without the
# timeouts of the role's or the database's.
sub wait_while_running
{
	my ($node, $query, $what, $h) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		return if $node->safe_psql('postgres', "SET statement_timeout = 0; SET lock_timeout = 0; $query") eq 't';
		$h->{run}->pump_nb if $h->{run}->pumpable;
		if (!$h->{run}->pumpable)
		{
			my ($out, $err) = finish_sql($h);
			Carp::croak("$h->{what} came first, while waiting for $what:\n$err");
		}
		select(undef, undef, undef, 0.1);
	}
	Carp::croak(timed_out($what));
}

# $WAIT_BUDGET: the cutover_budget of a call that waits, in its cutover,
# for the test's own steps (a lock the test holds until it releases it):
# as long as a wait of the test's, at most the engine's hour.
our $WAIT_BUDGET = ($PostgreSQL::Test::Utils::timeout_default < 3600 ? $PostgreSQL::Test::Utils::timeout_default : 3600) . ' s';

# Processes in the background: each handle holds the IPC::Run harness
# (run) and its timer (an IPC::Run::timeout), which each wait for the
# process starts anew (_wait_on), and what a wait for it waits for (what).

# _start(COMMAND, WHAT, REDIRECTIONS): COMMAND (an array reference) started
# with REDIRECTIONS; its handle.
sub _start
{
	my ($command, $what, @redirections) = @_;
	my $timer = IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
	return { what => $what, timer => $timer, run => IPC::Run::start($command, @redirections, $timer) };
}

# _wait_on(HANDLE, WHAT, CODE[, SECONDS]): CODE, a wait for HANDLE's
# process (finish, pump_until), with the timer started anew (for SECONDS,
# by default the test's timeout); if it runs out, the process is killed
# and the test dies with timed_out(WHAT).  Returns what CODE does.
sub _wait_on
{
	my ($h, $what, $code, $seconds) = @_;
	$h->{timer}->start($seconds // $PostgreSQL::Test::Utils::timeout_default);
	my $result;
	return $result if eval { $result = $code->(); 1 };
	my $error = $@;
	if ($h->{timer}->is_expired)
	{
		eval { $h->{run}->kill_kill(grace => 5) };
		Carp::croak(timed_out($what, $seconds));
	}
	die $error;
}

# _finish(HANDLE[, WHAT]): waits for HANDLE's process to end (WHAT: what
# that is, by default the handle's own what).
sub _finish
{
	my ($h, $what) = @_;
	return _wait_on($h, $what // $h->{what}, sub { $h->{run}->finish });
}

# _shown(SQL): SQL (a string or a reference to an array of statements) in
# a line, for a message.
sub _shown
{
	my ($sql) = @_;
	my $text = join('; ', ref $sql ? @$sql : $sql) =~ s/\s+/ /gr;
	return length($text) > 200 ? substr($text, 0, 200) . '...' : $text;
}

# new_server(NAME[, CONFIGURATION]): a new server, UTF-8 with the C.UTF-8
# locale, with the lines of CONFIGURATION added to postgresql.conf, started.
sub new_server
{
	my ($name, $configuration) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(extra => [ '--encoding=UTF8', '--locale=C.UTF-8' ]);
	# The tests' servers are not set up for atomic commit (but in
	# 033_atomic_commit.pl, which turns it on): their sessions commit as
	# postgres_fdw commits, without the warning that says so.
	$node->append_conf('postgresql.conf', 'subsetting.atomic_commit = off');
	$node->append_conf('postgresql.conf', $configuration) if defined $configuration;
	$node->start;
	return $node;
}

# password_logins(NODE, ROLES): the roles of ROLES (a comma-separated list)
# log in to NODE with their passwords (scram-sha-256), the others as
# before: dblink and postgres_fdw ask a password of a role that is not a
# superuser.
sub password_logins
{
	my ($node, $roles) = @_;
	my $hba = $node->data_dir . '/pg_hba.conf';
	my $rules = slurp_file($hba);
	open(my $fh, '>', $hba) or die "could not write $hba: $!";
	print $fh "local all $roles scram-sha-256\nhost all $roles 127.0.0.1/32 scram-sha-256\n$rules";
	close($fh);
	$node->reload;
	return;
}

# grant_columns_of_new_tables(NODE, ROLE): ROLE, a new role on NODE, gets
# from then on the columns (SELECT and UPDATE) of every table, view and
# foreign table made on NODE, by whoever makes it: an event trigger of a
# DBA's, as scripts that stand in for default privileges are.
sub grant_columns_of_new_tables
{
	my ($node, $role) = @_;
	$node->safe_psql(
		'postgres', qq{
		CREATE ROLE $role;
		CREATE FUNCTION grant_columns_to_$role() RETURNS event_trigger LANGUAGE plpgsql AS \$\$
		DECLARE
		    r record;
		    columns text;
		BEGIN
		    FOR r IN SELECT c.objid FROM pg_event_trigger_ddl_commands() AS c
		             WHERE c.command_tag IN ('CREATE TABLE', 'CREATE VIEW', 'CREATE FOREIGN TABLE') LOOP
		        SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO columns
		        FROM pg_attribute WHERE attrelid = r.objid AND attnum > 0 AND NOT attisdropped;
		        IF columns IS NOT NULL THEN
		            EXECUTE format('GRANT SELECT (%s), UPDATE (%1\$s) ON %s TO $role', columns, r.objid::regclass);
		        END IF;
		    END LOOP;
		END
		\$\$;
		CREATE EVENT TRIGGER grant_columns_to_$role ON ddl_command_end
		    WHEN TAG IN ('CREATE TABLE', 'CREATE VIEW', 'CREATE FOREIGN TABLE') EXECUTE FUNCTION grant_columns_to_$role()});
	return;
}

# shard_table(COORDINATOR, SHARDS, TABLE, COLUMNS, BUCKETS): TABLE sharded
# over the servers of SHARDS (an array reference) with postgres_fdw.  On
# each shard server: the extension, and a table TABLE (COLUMNS, the first
# of them id) with an index TABLE_id on id.  On COORDINATOR: the extensions
# subsetting and postgres_fdw; for the shard server of index s, a foreign
# server shard_<s> (extensions 'subsetting': a filter on jumpbackhash runs
# on the shard) with a user mapping for the current user, and a foreign
# table TABLE_<s> of its TABLE; TABLE (COLUMNS) PARTITION BY LIST
# (jumpbackhash(id, BUCKETS)), whose partition of bucket b is TABLE_<b>;
# the foreign tables of the shards from BUCKETS on are not partitions.
sub shard_table
{
	my ($coordinator, $shards, $table, $columns, $buckets) = @_;
	for my $shard (@$shards)
	{
		$shard->safe_psql('postgres',
			"CREATE EXTENSION subsetting;
			 CREATE TABLE $table ($columns);
			 CREATE INDEX ${table}_id ON $table (id)");
	}
	$coordinator->safe_psql('postgres',
		"CREATE EXTENSION subsetting; CREATE EXTENSION postgres_fdw;\n"
		  . join('',
			map {
				sprintf("CREATE SERVER shard_%d FOREIGN DATA WRAPPER postgres_fdw
				             OPTIONS (host '%s', port '%d', dbname 'postgres', extensions 'subsetting');
				         CREATE USER MAPPING FOR CURRENT_USER SERVER shard_%d;\n",
					$_, $shards->[$_]->host, $shards->[$_]->port, $_)
			} 0 .. $#$shards)
		  . "CREATE TABLE $table ($columns) PARTITION BY LIST (jumpbackhash(id, $buckets));\n"
		  . join('',
			map { "CREATE FOREIGN TABLE ${table}_$_ PARTITION OF $table FOR VALUES IN ($_)
			           SERVER shard_$_ OPTIONS (table_name '$table');\n" } 0 .. $buckets - 1)
		  . join('',
			map { "CREATE FOREIGN TABLE ${table}_$_ ($columns) SERVER shard_$_ OPTIONS (table_name '$table');\n" }
			  $buckets .. $#$shards));
	return;
}

# result_or_error(NODE, DATABASE, QUERY): the result of QUERY, unaligned; if
# it fails, its error message instead.
sub result_or_error
{
	my ($node, $db, $query) = @_;
	my ($out, $err);
	$node->psql($db, $query, stdout => \$out, stderr => \$err);
	return $err ne '' ? $err : $out;
}

# $ENGINE_LEFTOVERS: a query of what a resharding makes and must not leave
# (relations, triggers, constraints and functions named reshard_*, but the
# extension's own): 'none', or their names.
our $ENGINE_LEFTOVERS = q{
	SELECT coalesce(string_agg(x, ', ' ORDER BY x), 'none') FROM (
	    SELECT relname::text AS x FROM pg_class
	    WHERE relname LIKE 'reshard\_%' AND relname NOT LIKE 'reshard\_state%' AND relname <> 'reshard_progress'
	    UNION ALL
	    SELECT format('function %s', p.oid::regprocedure) FROM pg_proc p
	    WHERE p.proname LIKE 'reshard\_%'
	      AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
	    UNION ALL
	    SELECT format('trigger %s on %s', tgname, tgrelid::regclass) FROM pg_trigger WHERE tgname LIKE 'reshard\_%'
	    UNION ALL
	    SELECT format('constraint %s on %s', conname, conrelid::regclass) FROM pg_constraint
	    WHERE conname LIKE 'reshard\_%' AND conrelid <> 'reshard_state'::regclass) AS t};

# $CUT_AT: SQL that creates what a test uses to cut a resharding short in
# a chosen phase: the table engine_calls and the function cut_at.
our $CUT_AT = <<'SQL';
-- The session of each run's call records its backend and the time first.
CREATE TABLE engine_calls (run int PRIMARY KEY, pid int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());

-- The watcher: polls the resharding of table t by the call of run r; as
-- soon as the state row of this call shows the phase wanted or a later one (not
-- done or aborted) and the call's backend runs it, cancels or terminates
-- that backend (action), or closes the writers' gate (action 'gate': takes
-- the advisory lock 4242, which each writer round takes shared just before
-- its COMMIT, and keeps it for the rest of the session; the caller then
-- kills the backend or stops the server).  Gives "phase|pid|what it had
-- done" (the phase read again once the gate is closed; any other action:
-- nothing, the caller acts on the backend), or "phase|" when
-- the call ended first.  Waits at most the test's timeout (@TIMEOUT@ s),
-- then fails, naming what it waited for.
CREATE FUNCTION cut_at(t text, r int, wanted text, action text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    -- the engine's phases, in order (its phase table)
    phases constant text[] := ARRAY(SELECT f.phase FROM reshard_phases() AS f ORDER BY f.ordinal);
    caller int;
    since timestamptz;
    p record;
    deadline constant timestamptz := clock_timestamp() + interval '@TIMEOUT@ s';
BEGIN
    IF array_position(phases, wanted) IS NULL THEN
        RAISE EXCEPTION 'no phase %', wanted;
    END IF;
    LOOP
        SELECT c.pid, c.at INTO caller, since FROM engine_calls c WHERE c.run = r;
        SELECT s.phase, s.pid, s.rows_copied, s.changes_applied, s.cutover_attempts INTO p
        FROM reshard_progress s WHERE s."table" = t AND s.started >= since;
        IF p.pid = caller AND p.phase NOT IN ('done', 'aborted')
           AND array_position(phases, p.phase) >= array_position(phases, wanted) THEN
            IF action = 'cancel' THEN
                PERFORM pg_cancel_backend(p.pid);
            ELSIF action = 'terminate' THEN
                PERFORM pg_terminate_backend(p.pid);
            ELSIF action = 'gate' THEN
                PERFORM pg_advisory_lock(4242);
                SELECT s.phase, s.pid, s.rows_copied, s.changes_applied, s.cutover_attempts INTO p
                FROM reshard_progress s WHERE s."table" = t AND s.started >= since;
            END IF;
            RETURN format('%s|%s|%s rows copied, %s changes applied, %s cutover attempts',
                          p.phase, caller, p.rows_copied, p.changes_applied, p.cutover_attempts);
        END IF;
        PERFORM pg_stat_clear_snapshot();    -- else pg_stat_activity stays as first read
        IF caller IS NOT NULL AND NOT EXISTS (SELECT FROM pg_stat_activity a WHERE a.pid = caller) THEN
            RETURN coalesce(p.phase, 'none') || '|';
        END IF;
        IF clock_timestamp() > deadline THEN
            RAISE EXCEPTION 'timed out after @TIMEOUT@ s waiting for the call of run % to reach phase % of %', r, wanted, t
                USING DETAIL = CASE WHEN caller IS NULL THEN 'The call has not begun.'
                                    ELSE format('Its resharding is in phase %s.', coalesce(p.phase, 'none')) END;
        END IF;
        PERFORM pg_sleep(0.0005);
    END LOOP;
END $$;
SQL
$CUT_AT =~ s/\@TIMEOUT\@/$PostgreSQL::Test::Utils::timeout_default/g;

# engine_leftovers_but(NODE, INACTIVE): what of the engine is left on NODE
# ('none'), but the triggers on the partitions named in the hash INACTIVE
# (an undo leaves the triggers of a partition a transaction holds, inactive,
# with a WARNING), and how many of those triggers there are.
sub engine_leftovers_but
{
	my ($node, $inactive) = @_;
	my ($rest, $count) = ([], 0);
	for my $x (split /, /, $node->safe_psql('postgres', $ENGINE_LEFTOVERS))
	{
		next if $x eq 'none';
		if ($x =~ /^trigger reshard_(?:capture|refuse_truncate)_\d+ on (\S+)$/ && $inactive->{$1})
		{
			$count++;
		}
		else
		{
			push @$rest, $x;
		}
	}
	return ((@$rest ? join(', ', @$rest) : 'none'), $count);
}

# inactive_triggers_heard(INACTIVE, TEXT): adds to the hash INACTIVE the
# partitions whose triggers TEXT's WARNINGs say an undo left, inactive.
sub inactive_triggers_heard
{
	my ($inactive, $said) = @_;
	$inactive->{$1} = 1
	  while $said =~ /the resharding's trigger on (?:public\.)?(\S+) is left, inactive: another transaction holds the table/g;
	return;
}

# wait_for_restart(NODE, OFFSET): NODE has restarted after a crash (its log
# past OFFSET says so) and accepts connections.  poll_query_until only once
# the log says it is ready: its psql, refused while the server recovers,
# may exit before it reads its query from stdin, and IPC::Run then dies of
# the broken pipe ("ack Broken pipe: write( 16, 'SELECT true' )").
sub wait_for_restart
{
	my ($node, $offset) = @_;
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $offset);
	$node->wait_for_log(qr/database system is ready to accept connections/, $offset);
	wait_until($node, 'SELECT true', $node->name . ' to accept connections after its restart');
	return;
}

# link_servers(COORDINATOR, SERVERS): the extension on COORDINATOR and on
# each server of SERVERS (a hash reference, by name); postgres_fdw and
# dblink on COORDINATOR, with a foreign server of each name (its database
# postgres) and a user mapping of the current user for it.
sub link_servers
{
	my ($coordinator, $servers) = @_;
	$servers->{$_}->safe_psql('postgres', 'CREATE EXTENSION subsetting') for sort keys %$servers;
	$coordinator->safe_psql('postgres',
		"CREATE EXTENSION subsetting; CREATE EXTENSION postgres_fdw; CREATE EXTENSION dblink;\n"
		  . join('',
			map {
				sprintf("CREATE SERVER %s FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '%s', port '%d', dbname 'postgres');
				         CREATE USER MAPPING FOR CURRENT_USER SERVER %s;\n",
					$_, $servers->{$_}->host, $servers->{$_}->port, $_)
			} sort keys %$servers));
	return;
}

# mirrored_writers(READ): writers through a table items (id bigint, v
# text, n int) of a mirror table mirror, ids from the sequence ids: each
# transaction changes the table and the mirror alike, or neither (insert,
# update, delete, and rekey: a row deleted and inserted under a new id);
# READ, a query of a row given the expression of an id, reads.  Ids are
# picked once per statement from 1 to the sequence's last value, among
# those of the mirror: the statement's snapshot here is taken before the
# one postgres_fdw takes on a server, so an id inserted meanwhile could be
# updated there while its mirror row is not yet seen here (a difference
# that is postgres_fdw's, not the engine's); a mirror row seen here was
# committed on the server first.
#	postgres_fdw commits a writer's transaction on a server before it
# commits here, without two-phase commit: a crash here in between would
# leave a row changed there but not in the mirror, a difference that is
# postgres_fdw's, not the engine's.  So each writer takes the gate (the
# advisory lock 4242, shared) just before its COMMIT: a test that crashes a
# server or stops one closes the gate first (close_gate), and finds no
# writer committing.
sub mirrored_writers
{
	my ($read) = @_;
	my $pick = "(SELECT m.id FROM mirror AS m WHERE m.id = (SELECT 1 + (random() * (SELECT last_value FROM ids))::bigint))";
	my %writes = (
		insert => "WITH i AS (INSERT INTO items (id, v) VALUES (nextval('ids'), 'inserted') RETURNING *)
		           INSERT INTO mirror SELECT * FROM i",
		update => "WITH u AS (UPDATE items SET n = n + 1, v = 'updated' WHERE id = $pick RETURNING *)
		           UPDATE mirror AS m SET n = u.n, v = u.v FROM u WHERE m.id = u.id",
		delete => "WITH d AS (DELETE FROM items WHERE id = $pick RETURNING id)
		           DELETE FROM mirror AS m USING d WHERE m.id = d.id",
		rekey => "WITH d AS (DELETE FROM items WHERE id = $pick RETURNING *),
		                i AS (INSERT INTO items SELECT nextval('ids'), d.v, d.n FROM d RETURNING *),
		                m AS (DELETE FROM mirror AS m USING d WHERE m.id = d.id)
		           INSERT INTO mirror SELECT * FROM i");
	return (
		(map { ($_ => "BEGIN; $writes{$_}; SELECT pg_advisory_xact_lock_shared(4242); COMMIT") } keys %writes),
		read => $read->($pick));
}

# items_equal_mirror(NODE, WHAT): the table items of NODE equals its mirror
# (EXCEPT ALL both ways); on failure, the first rows that differ, each with
# its partition.
sub items_equal_mirror
{
	my ($node, $what) = @_;
	my $only = sub {
		my ($a, $b) = @_;
		return "SELECT count(*) FROM (SELECT * FROM $a EXCEPT ALL SELECT * FROM $b) AS x";
	};
	my $ok = Test::More::is($node->safe_psql('postgres', "SELECT (" . $only->('items', 'mirror') . ") || ' ' || (" . $only->('mirror', 'items') . ")"),
		'0 0', "$what: the table equals its mirror (rows only in the table, only in the mirror)");
	Test::More::diag($node->safe_psql('postgres',
		"SELECT 'only in the table: ' || x::text || ' in ' || i.tableoid::regclass::text
		 FROM (SELECT * FROM items EXCEPT ALL SELECT * FROM mirror) AS x JOIN items AS i ON i.id = x.id
		 UNION ALL
		 (SELECT 'only in the mirror: ' || x::text || coalesce(' (in the table as ' || i::text || ')', '')
		  FROM (SELECT * FROM mirror EXCEPT ALL SELECT * FROM items) AS x LEFT JOIN items AS i ON i.id = x.id)
		 LIMIT 20"))
	  unless $ok;
	return;
}

# watch_and_cut(NODE, TABLE, RUN, PHASE, ACTION): in a session of its own,
# waits for the call of RUN (engine_calls) to reach PHASE or a later one,
# then cuts it short by ACTION (cut_at: 'cancel', 'terminate', or 'gate',
# which closes the writers' gate and keeps it closed while the session
# lasts).  Returns cut_at's answer and the session, for end_watch.
sub watch_and_cut
{
	my ($node, $table, $run, $phase, $action) = @_;
	my $session = { in => '', out => '', err => '' };
	my $h = _start([ $node->installed_command('psql'), '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
		"the session of the watcher of run $run to end",
		'<', \$session->{in}, '>', \$session->{out}, '2>', \$session->{err});
	@$session{qw(what timer run)} = @$h{qw(what timer run)};
	$session->{in} .= "SELECT cut_at('$table', $run, '$phase', '$action');\n";
	# (cut_at gives up after the test's timeout, and says what it saw: this
	# wait, twice as long, is for a watcher that does not answer at all)
	_wait_on($session, "the watcher of run $run to answer",
		sub { pump_until($session->{run}, $session->{timer}, \$session->{out}, qr/\n/) },
		2 * $PostgreSQL::Test::Utils::timeout_default)
	  or die "the watcher of run $run does not answer: $session->{err}";
	chomp(my $answer = $session->{out});
	return ($answer, $session);
}

# end_watch(SESSION): the session of watch_and_cut ends (if a crash has
# not ended it already: writing to it then fails, which is no error here).
sub end_watch
{
	my ($session) = @_;
	$session->{in} .= "\\q\n";
	eval { _finish($session) };
	die $@ if $@ =~ /^timed out after/;
	return;
}

# close_gate(NODE, TABLE, RUN, PHASE): watch_and_cut with the action
# 'gate': once the call of RUN is in PHASE or a later one, the writers'
# gate closes, and stays closed until open_gate(SESSION).
sub close_gate
{
	my ($node, $table, $run, $phase) = @_;
	return watch_and_cut($node, $table, $run, $phase, 'gate');
}

sub open_gate
{
	my ($session) = @_;
	end_watch($session);
	return;
}

# cut_call(NODE, CALL, TABLE, RUN, PHASE, HOW, WHAT): the call CALL (a
# start_sql session on NODE, WHAT its end for messages) cut short as the
# resharding of TABLE is in PHASE, HOW: 'cancel' or 'terminate' (cut_at),
# or 'kill' (its backend killed: the server restarts, which this waits
# for).  Returns what the watcher saw (phase|pid|progress, no pid: the call
# had ended) and what the call said on stderr.
sub cut_call
{
	my ($node, $call, $table, $run, $phase, $how, $what) = @_;
	my $log_offset = -s $node->logfile;
	my ($seen, $gate) = $how eq 'kill' ? close_gate($node, $table, $run, $phase)
	  : (on($node, "SELECT cut_at('$table', $run, '$phase', '$how')"));
	my (undef, $pid) = split /\|/, $seen;
	if ($how eq 'kill' && $pid)
	{
		# (the call may have ended between the phase seen and the kill: then
		# its session says so, and nothing restarts)
		kill 'KILL', $pid;
		my (undef, $said) = finish_sql($call, $what);
		wait_for_restart($node, $log_offset) if $said =~ /connection to server was lost/;
	}
	open_gate($gate) if $gate;
	my (undef, $err) = finish_sql($call, $what);
	return ($seen, $err);
}

# Writers that outlive their sessions (a terminated backend, a crash, a
# restart): each a shell loop that runs one SQL statement in a psql of its
# own, again whenever its session ended, until stop_writer_loops; their
# errors go to writer_NAME.log in the test's log directory.  The loops end
# with the test however it ends.
my $writer_stop_file;
my @writer_loops;

# start_writer_loops(NODE, NAME => SQL, ...): one loop per statement.
sub start_writer_loops
{
	my ($node, %statements) = @_;
	$writer_stop_file //= PostgreSQL::Test::Utils::tempdir() . '/stop_writers';
	unlink $writer_stop_file;
	my ($psql, $connstr) = ($node->installed_command('psql'), $node->connstr('postgres'));
	for my $name (sort keys %statements)
	{
		my $statement = $statements{$name};
		push @writer_loops, _start(
			[ 'bash', '-c',
			  "while [ ! -e '$writer_stop_file' ]; do '$psql' -X -q -d \"\$CONNSTR\" -c \"\$STATEMENT\"; sleep 0.1; done" ],
			"the writer loop $name to end (its statement: " . _shown($statement) . ')',
			'>', '/dev/null', '2>>', "$PostgreSQL::Test::Utils::log_path/writer_$name.log",
			init => sub { @ENV{qw(CONNSTR STATEMENT)} = ($connstr, $statement) });
	}
	return;
}

# start_pgbench_loop(NODE, NAME, SCRIPT, CLIENTS): a loop of pgbench runs
# of SCRIPT (pgbench's script language) by CLIENTS clients, 5 s each, again
# when a run ends (pgbench ends a client at its first error, a run once all
# its clients ended); stopped with the writer loops.
sub start_pgbench_loop
{
	my ($node, $name, $script, $clients) = @_;
	$writer_stop_file //= PostgreSQL::Test::Utils::tempdir() . '/stop_writers';
	unlink $writer_stop_file;
	my $script_file = PostgreSQL::Test::Utils::tempdir() . "/$name.pgbench";
	PostgreSQL::Test::Utils::append_to_file($script_file, $script);
	my ($pgbench, $connstr) = ($node->installed_command('pgbench'), $node->connstr('postgres'));
	push @writer_loops, _start(
		[ 'bash', '-c',
		  "while [ ! -e '$writer_stop_file' ]; do '$pgbench' -n -c $clients -T 5 -f '$script_file' \"\$CONNSTR\"; sleep 0.1; done" ],
		"the pgbench loop $name to end",
		'>>', "$PostgreSQL::Test::Utils::log_path/writer_$name.log", '2>&1',
		init => sub { $ENV{CONNSTR} = $connstr });
	return;
}

# stop_writer_loops(STOP): no loop starts its statement again; STOP (code)
# makes the running statements end; then waits for the loops to end (for
# each, at most the test's timeout).
sub stop_writer_loops
{
	my ($stop) = @_;
	open(my $fh, '>', $writer_stop_file) or die "could not create $writer_stop_file: $!";
	close($fh);
	$stop->();
	_finish($_) for @writer_loops;
	@writer_loops = ();
	return;
}

END
{
	if (defined $writer_stop_file)
	{
		my $fh;
		close($fh) if open($fh, '>', $writer_stop_file);
	}
	$_->{run}->kill_kill for @writer_loops;
}

# start_sql(NODE, SQL[, DATABASE]): runs SQL (a string, or a reference to
# an array of statements, each sent on its own: a procedure that commits
# needs that) in a psql of its own, in the background (unaligned, tuples
# only, stopping at the first error);
# finish_sql(HANDLE[, WHAT]) waits for it to end (at most the test's
# timeout from then: else it dies naming WHAT, by default the SQL) and
# returns (stdout, stderr); called again, it returns them again.
sub start_sql
{
	my ($node, $sql, $db) = @_;
	my $h = { out => '', err => '' };
	my $started = _start(
		[
			$node->installed_command('psql'), '-XAtq',
			'-v', 'ON_ERROR_STOP=1',
			'-d', $node->connstr($db // 'postgres'),
			map { ('-c', $_) } ref $sql ? @$sql : $sql
		],
		'the end of ' . _shown($sql) . ' on ' . $node->name,
		'>', \$h->{out}, '2>', \$h->{err});
	@$h{qw(what timer run)} = @$started{qw(what timer run)};
	return $h;
}

sub finish_sql
{
	my ($h, $what) = @_;
	if (!$h->{finished})
	{
		_finish($h, $what);
		chomp $h->{out};
		$h->{finished} = 1;
	}
	return ($h->{out}, $h->{err});
}

# background_session(NODE[, PARAMETERS]): NODE's background_psql (database
# postgres; PARAMETERS as background_psql takes them) whose timeout counts
# from each query (set_query_timer_restart), not from the session's start:
# the session may stay open while the test goes on.  Its queries through
# session_query.
sub background_session
{
	my ($node, %parameters) = @_;
	my $session = $node->background_psql('postgres', %parameters);
	$session->set_query_timer_restart();
	return $session;
}

# session_query(SESSION, SQL[, METHOD]): SESSION->METHOD(SQL) (query_safe
# by default, or query: PostgreSQL::Test::BackgroundPsql), in scalar
# context; if the answer does not come in time, dies naming SQL.
sub session_query
{
	my ($session, $sql, $method) = @_;
	$method //= 'query_safe';
	my $result;
	return $result if eval { $result = $session->$method($sql); 1 };
	Carp::croak(timed_out('the answer to ' . _shown($sql) . ' in a background session'))
	  if $@ =~ /^(IPC::Run: timeout on|psql query timed out)/;
	die $@;
}

# ran_out_of_attempts(ERROR, TABLE): whether ERROR (a call's stderr) says
# that the call on TABLE (schema-qualified as its errors name it) ran out
# of its attempts, at its cutover or at taking its locks: the call keeps
# its work, and calling it again continues it, as its hint says.
sub ran_out_of_attempts
{
	my ($error, $table) = @_;
	return $error =~ /could not (?:cut \Q$table\E over|lock the [^\n]* of \Q$table\E [^\n]*) within \d+ ms in \d+ attempts/;
}

# again_with_larger_budget(CALL, N): CALL as the Nth call of a resharding
# or move that ran out of attempts makes it.  The first call is CALL as
# written; from the second on, a call that names no cutover_budget gets
# one, doubled each call: 1 s, 2 s, 4 s, 8 s (what a DBA does, as the
# error's hint says, when writers on a busy machine keep the default from
# fitting).  A call that names its budget is made as written.
sub again_with_larger_budget
{
	my ($call, $n) = @_;
	return $call if $n == 1 || $call =~ /cutover_budget/;
	my $budget = 1000 * 2**($n - 2);
	$call =~ s/\)\s*;?\s*$/, cutover_budget => '$budget ms')/
	  or Carp::croak("again_with_larger_budget: not a CALL ending in ')': $call");
	return $call;
}

# call_until_done(NODE, CALL, TABLE): CALL, a resharding or move of TABLE
# (schema-qualified as its errors name it) with a cutover budget the test
# does not measure.  On a busy machine its attempts can run out (a timing,
# not a result: ran_out_of_attempts); calling again continues it; it is
# called again, at most 5 times in all, with a larger budget each time
# (again_with_larger_budget).
# Returns its exit code, stdout and stderr (of the last call), how many
# calls it took (to report, not to check), and the stderr of every call
# (what the first said, a NOTICE, is in it).
sub call_until_done
{
	my ($node, $call, $table) = @_;
	my ($ret, $out, $err);
	my $calls = 0;
	my $said = '';
	while ($calls < 5)
	{
		$calls++;
		($ret, $out, $err) = $node->psql('postgres', again_with_larger_budget($call, $calls));
		$said .= $err;
		last if $ret == 0;
		Test::More::note("$call, call $calls: $err");
		last unless ran_out_of_attempts($err, $table);
	}
	return ($ret, $out, $err, $calls, $said);
}

# atomic_commit_cluster(SERVER_SQL, FIRST_KEY): a coordinator (the library
# preloaded: the stops between the phases of subsetting.atomic_commit_test_stop
# need it) and servers a and b, all with prepared transactions and
# subsetting.atomic_commit on, linked (link_servers); SERVER_SQL run on each
# server (its table t (id, k, v) among others), which is then set up
# (atomic_commit_add_server).  On the coordinator: t (id bigint, k int, v
# text) sharded by jumpbackhash over 3 buckets, t_0 here, t_1 on a and t_2
# on b (their tables t); a table mirror (k int PRIMARY KEY); keys (bucket,
# n, id): the n-th key of each bucket, of the keys from FIRST_KEY to
# 300000.  Returns the coordinator and a reference to the hash of servers.
sub atomic_commit_cluster
{
	my ($server_sql, $first_key) = @_;
	my $prepared = "max_prepared_transactions = 20\nsubsetting.atomic_commit = on";
	my $coordinator = new_server('coordinator', "shared_preload_libraries = 'subsetting'\n$prepared");
	my %servers = (a => new_server('a', $prepared), b => new_server('b', $prepared));
	link_servers($coordinator, \%servers);
	for my $name (sort keys %servers)
	{
		$servers{$name}->safe_psql('postgres', $server_sql);
		on($coordinator, "SELECT atomic_commit_add_server('$name')");
	}
	on($coordinator, qq{
		CREATE TABLE t (id bigint NOT NULL, k int NOT NULL, v text) PARTITION BY HASH (id jumpbackhash3_int8_ops);
		CREATE TABLE t_0 PARTITION OF t FOR VALUES WITH (MODULUS 3, REMAINDER 0);
		CREATE FOREIGN TABLE t_1 PARTITION OF t FOR VALUES WITH (MODULUS 3, REMAINDER 1)
			SERVER a OPTIONS (table_name 't');
		CREATE FOREIGN TABLE t_2 PARTITION OF t FOR VALUES WITH (MODULUS 3, REMAINDER 2)
			SERVER b OPTIONS (table_name 't');
		CREATE TABLE mirror (k int PRIMARY KEY);
		CREATE TABLE keys AS
		SELECT jumpbackhash(id, 3) AS bucket, row_number() OVER (PARTITION BY jumpbackhash(id, 3) ORDER BY id) AS n, id
		FROM generate_series($first_key, 300000) AS id;
		CREATE INDEX ON keys (bucket, n);
	});
	return ($coordinator, \%servers);
}

# start_calls_until_done(NODE, NAME, CALLS): in the background, each call
# of CALLS (an array reference of resharding or move calls, one after the
# other) made again, a second after each failure (a server down, attempts
# run out: calling again continues it), until it succeeds, at most 100
# times; what each failure said goes to calls_NAME.log in the test's log
# directory.  finish_calls(HANDLE) waits for the end and returns, for each
# call, "CALL: N calls" (N the number it took, or "gave up").
sub start_calls_until_done
{
	my ($node, $name, $calls) = @_;
	my $h = { out => '' };
	my $log = "$PostgreSQL::Test::Utils::log_path/calls_$name.log";
	my ($psql, $connstr) = ($node->installed_command('psql'), $node->connstr('postgres'));
	$h->{handle} = _start(
		[ 'bash', '-c', q{
			for call in "$@"; do
				n=0
				until n=$((n + 1)); '$PSQL' -X -q -v ON_ERROR_STOP=1 -d "$CONNSTR" -c "$call" >/dev/null 2>>"$LOG"; do
					if [ $n -ge 100 ]; then echo "$call: gave up"; continue 2; fi
					sleep 1
				done
				echo "$call: $n calls"
			done
		  } =~ s/'\$PSQL'/'$psql'/r, 'calls', @$calls ],
		"the calls $name to end",
		'>', \$h->{out},
		init => sub { @ENV{qw(CONNSTR LOG)} = ($connstr, $log) });
	return $h;
}

sub finish_calls
{
	my ($h) = @_;
	_finish($h->{handle});
	return split /\n/, $h->{out};
}

1;
