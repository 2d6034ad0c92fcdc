# test/t/030_colocated_joins.pl
#	Joins of co-located tables run on the servers (issue 44, item 4;
#	docs/scaling-out.md, "Co-located tables"): orders and order_items,
#	co-located, spread from one server to three by rebalance; with the
#	setting the docs recommend (enable_partitionwise_join on, here for the
#	database), a join of the two on the key, whole or restricted, is one
#	join per bucket on each server that holds it (EXPLAIN: a Foreign Scan
#	of Relations: (orders_b o) INNER JOIN (order_items_b i)), as the move
#	made the foreign tables ask the server for its estimates
#	(use_remote_estimate; on PostgreSQL 15 and 16 a join restricted to one
#	customer still reads its two partitions from the server and joins
#	here); the answers are those of the tables all here.
#
# suite: partition move
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $BUCKETS = 8;
my $coordinator = new_server('coordinator');
my %servers = (a => new_server('server_a'), b => new_server('server_b'));

sub on
{
	my ($node, $sql) = @_;
	return $node->safe_psql('postgres', $sql);
}

link_servers($coordinator, \%servers);
on($coordinator,
	"CREATE TABLE orders (customer_id bigint NOT NULL, order_id bigint NOT NULL, total numeric)
	     PARTITION BY HASH (customer_id jumpbackhash${BUCKETS}_int8_ops);
	 CREATE TABLE order_items (customer_id bigint NOT NULL, order_id bigint NOT NULL, item int, quantity int)
	     PARTITION BY HASH (customer_id jumpbackhash${BUCKETS}_int8_ops);
	 SELECT format('CREATE TABLE %1\$s_%2\$s PARTITION OF %1\$s FOR VALUES WITH (MODULUS $BUCKETS, REMAINDER %2\$s)', t, b)
	 FROM unnest(ARRAY['orders', 'order_items']) AS t, generate_series(0, $BUCKETS - 1) AS b \\gexec
	 CREATE INDEX ON orders (customer_id, order_id);
	 CREATE INDEX ON order_items (customer_id, order_id);
	 INSERT INTO orders SELECT c, o, o * 1.5 FROM generate_series(1, 2000) AS c, generate_series(1, 4) AS o;
	 INSERT INTO order_items SELECT c, o, i, i FROM generate_series(1, 2000) AS c, generate_series(1, 4) AS o,
	                                                generate_series(1, 3) AS i;
	 ANALYZE orders, order_items;
	 SELECT colocate(ARRAY['orders', 'order_items']::regclass[]);
	 ALTER DATABASE postgres SET enable_partitionwise_join = on;");
my %queries = (
	whole => "SELECT count(*), sum(i.quantity * o.total) FROM orders o JOIN order_items i USING (customer_id, order_id)",
	restricted => "SELECT count(*), sum(i.quantity * o.total) FROM orders o JOIN order_items i USING (customer_id, order_id)
	               WHERE o.total > 3 AND i.item < 3",
	customer => "SELECT count(*), sum(i.quantity * o.total) FROM orders o JOIN order_items i USING (customer_id, order_id)
	             WHERE o.customer_id = CUSTOMER");
# (a customer of each bucket: the query of one customer, for each bucket)
my %customer_of = map { split /\|/ } split /\n/, on($coordinator,
	"SELECT jumpbackhash(c, $BUCKETS), min(c) FROM generate_series(1, 2000) AS c GROUP BY 1");
# (the answers all here; of one customer, for each bucket)
my %answer = map { $_ => on($coordinator, $queries{$_}) } qw(whole restricted);
$answer{"customer $_"} = on($coordinator, $queries{customer} =~ s/CUSTOMER/$customer_of{$_}/r) for keys %customer_of;

my ($ret, $out, $err) = call_until_done($coordinator, "CALL rebalance('orders', ARRAY[NULL, 'a', 'b'])", 'public.orders');
is($ret, 0, 'rebalance of the group from one server to three') or diag $err;
my %server_of = map { split /\|/ } split /\n/, on($coordinator,
	"SELECT bucket, coalesce(server, 'here') FROM partition_placement WHERE \"table\" = 'orders'::regclass");
my @remote = grep { $server_of{$_} ne 'here' } sort { $a <=> $b } keys %server_of;
is(on($coordinator, "SELECT count(*) FROM partition_placement p
	WHERE p.\"table\" = 'order_items'::regclass AND p.server IS NOT DISTINCT FROM
	      (SELECT q.server FROM partition_placement q WHERE q.\"table\" = 'orders'::regclass AND q.bucket = p.bucket)"),
	$BUCKETS, "each bucket of order_items is where the bucket of orders is");
is(on($coordinator, "SELECT count(*) FROM pg_foreign_table f, pg_options_to_table(f.ftoptions) AS o
	WHERE o.option_name = 'use_remote_estimate' AND o.option_value = 'true'"),
	2 * @remote, "the moves made each foreign partition of the group ask its server for estimates");

# (PostgreSQL 15 and 16 join the rows of one customer here: two small reads
# of its server, which the planner finds cheaper)
my $version = on($coordinator, "SHOW server_version_num");
for my $name (sort keys %queries)
{
	next if $name eq 'customer' && $version < 170000;
	my $query = $queries{$name} =~ s/CUSTOMER/$customer_of{$remote[0]}/r;
	my $plan = on($coordinator, "EXPLAIN (COSTS OFF) $query");
	my @joined = $plan =~ /Relations: \(orders_(\d+) o(?:_\d+)?\) INNER JOIN \(order_items_\1 i(?:_\d+)?\)/g;
	my @expected = $name eq 'customer' ? ($remote[0]) : @remote;
	is(join(',', sort { $a <=> $b } @joined), join(',', @expected),
		"$name join: one join on the server for each bucket there (" . join(',', @expected) . ")")
	  or diag $plan;
	is(() = $plan =~ /Foreign Scan on/g, 0, "$name join: no partition of a server read here") or diag $plan;
	is(on($coordinator, $query), $answer{$name eq 'customer' ? "customer $remote[0]" : $name},
		"$name join: the answer of the tables all here");
}
is(join(' ', map { on($coordinator, $queries{customer} =~ s/CUSTOMER/$customer_of{$_}/r) } sort keys %customer_of),
	join(' ', map { $answer{"customer $_"} } sort keys %customer_of),
	"the join of one customer of each bucket: the answer of the tables all here");

done_testing();
