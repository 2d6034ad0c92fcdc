# test/perl/SubsettingTest.pm
#	What the TAP tests of test/t/ share: their servers, made one way, a
#	query whose error is a result to check, and SQL run in the background.
#	A test loads it with
#		use FindBin;
#		use lib "$FindBin::RealBin/../perl";
#		use SubsettingTest;
#	start_sql and finish_sql are exported on request only:
#		use SubsettingTest qw(:DEFAULT start_sql finish_sql);
package SubsettingTest;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(new_server result_or_error start_sql finish_sql);

# new_server(NAME[, CONFIGURATION]): a new server, UTF-8 with the C.UTF-8
# locale, with the lines of CONFIGURATION added to postgresql.conf, started.
sub new_server
{
	my ($name, $configuration) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(extra => [ '--encoding=UTF8', '--locale=C.UTF-8' ]);
	$node->append_conf('postgresql.conf', $configuration) if defined $configuration;
	$node->start;
	return $node;
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

# start_sql(NODE, SQL[, DATABASE]): runs SQL in a psql of its own, in the
# background (unaligned, tuples only, stopping at the first error);
# finish_sql(HANDLE) waits for it to end and returns (stdout, stderr).
sub start_sql
{
	my ($node, $sql, $db) = @_;
	my $h = { out => '', err => '' };
	$h->{run} = IPC::Run::start(
		[
			$node->installed_command('psql'), '-XAtq',
			'-v', 'ON_ERROR_STOP=1',
			'-d', $node->connstr($db // 'postgres'),
			'-c', $sql
		],
		'>', \$h->{out}, '2>', \$h->{err},
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return $h;
}

sub finish_sql
{
	my ($h) = @_;
	$h->{run}->finish;
	chomp $h->{out};
	return ($h->{out}, $h->{err});
}

1;
