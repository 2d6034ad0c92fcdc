# test/perl/SubsettingTest.pm
#	What the TAP tests of test/t/ share: their servers, made one way, and a
#	query whose error is a result to check.  A test loads it with
#		use FindBin;
#		use lib "$FindBin::RealBin/../perl";
#		use SubsettingTest;
package SubsettingTest;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use PostgreSQL::Test::Cluster;

our @EXPORT = qw(new_server result_or_error);

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

1;
