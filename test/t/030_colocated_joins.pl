# test/t/030_colocated_joins.pl
#	Joins of co-located tables run on the servers (issue 44, items 4 and 6;
#	docs/scaling-out.md, "Co-located tables"): customers, orders and
#	order_items (the first two with primary keys, handed to their
#	partitions), co-located, spread from one server to three by rebalance
#	and back; with the
#	setting the docs recommend (enable_partitionwise_join on, here for the
#	database), a join of the two on the key, whole or restricted, is one
#	join per bucket on each server that holds it (EXPLAIN: a Foreign Scan
#	of Relations: (orders_b o) INNER JOIN (order_items_b i)), as the move
#	made the foreign tables ask the server for its estimates
#	(use_remote_estimate; before PostgreSQL 17 a join restricted to one
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

link_servers($coordinator, \%servers);
on($coordinator,
	"CREATE TABLE customers (customer_id bigint PRIMARY KEY, name text)
	     PARTITION BY HASH (customer_id jumpbackhash${BUCKETS}_int8_ops);
	 CREATE TABLE orders (customer_id bigint NOT NULL, order_id bigint NOT NULL, total numeric,
	                      PRIMARY KEY (customer_id, order_id))
	     PARTITION BY HASH (customer_id jumpbackhash${BUCKETS}_int8_ops);
	 CREATE TABLE order_items (customer_id bigint NOT NULL, order_id bigint NOT NULL, item int, quantity int)
	     PARTITION BY HASH (customer_id jumpbackhash${BUCKETS}_int8_ops);
	 SELECT format('CREATE TABLE %1\$s_%2\$s PARTITION OF %1\$s FOR VALUES WITH (MODULUS $BUCKETS, REMAINDER %2\$s)', t, b)
	 FROM unnest(ARRAY['customers', 'orders', 'order_items']) AS t, generate_series(0, $BUCKETS - 1) AS b \\gexec
	 CREATE INDEX ON order_items (customer_id, order_id);
	 INSERT INTO customers SELECT c, 'c' || c FROM generate_series(1, 2000) AS c;
	 INSERT INTO orders SELECT c, o, o * 1.5 FROM generate_series(1, 2000) AS c, generate_series(1, 4) AS o;
	 INSERT INTO order_items SELECT c, o, i, i FROM generate_series(1, 2000) AS c, generate_series(1, 4) AS o,
	                                                generate_series(1, 3) AS i;
	 ANALYZE customers, orders, order_items;
	 CALL unique_constraints_to_partitions('customers');
	 CALL unique_constraints_to_partitions('orders');
	 SELECT colocate(ARRAY['customers', 'orders', 'order_items']::regclass[]);
	 ALTER DATABASE postgres SET enable_partitionwise_join = on;");
my %queries = (
	whole => "SELECT count(*), sum(i.quantity * o.total) FROM orders o JOIN order_items i USING (customer_id, order_id)",
	restricted => "SELECT count(*), sum(i.quantity * o.total) FROM orders o JOIN order_items i USING (customer_id, order_id)
	               WHERE o.total > 3 AND i.item < 3",
	customer => "SELECT count(*), sum(i.quantity * o.total) FROM orders o JOIN order_items i USING (customer_id, order_id)
	             WHERE o.customer_id = CUSTOMER",
	customers => "SELECT count(*), sum(o.total) FROM customers c JOIN orders o USING (customer_id) WHERE c.name LIKE 'c1%'");
# (a customer of each bucket: the query of one customer, for each bucket)
my %customer_of = map { split /\|/ } split /\n/, on($coordinator,
	"SELECT jumpbackhash(c, $BUCKETS), min(c) FROM generate_series(1, 2000) AS c GROUP BY 1");
# (the answers all here; of one customer, for each bucket)
my %answer = map { $_ => on($coordinator, $queries{$_}) } qw(whole restricted customers);
$answer{"customer $_"} = on($coordinator, $queries{customer} =~ s/CUSTOMER/$customer_of{$_}/r) for keys %customer_of;

my ($ret, $out, $err) = call_until_done($coordinator, "CALL rebalance('orders', ARRAY[NULL, 'a', 'b'])", 'public.orders');
is($ret, 0, 'rebalance of the group from one server to three') or diag $err;
my %server_of = map { split /\|/ } split /\n/, on($coordinator,
	"SELECT bucket, coalesce(server, 'here') FROM partition_placement WHERE \"table\" = 'orders'::regclass");
my @remote = grep { $server_of{$_} ne 'here' } sort { $a <=> $b } keys %server_of;
is(on($coordinator, "SELECT count(*) FROM partition_placement p
	WHERE p.\"table\" IN ('customers'::regclass, 'order_items'::regclass) AND p.server IS NOT DISTINCT FROM
	      (SELECT q.server FROM partition_placement q WHERE q.\"table\" = 'orders'::regclass AND q.bucket = p.bucket)"),
	2 * $BUCKETS, "each bucket of customers and of order_items is where the bucket of orders is");
is(on($coordinator, "SELECT count(*) FROM pg_foreign_table f, pg_options_to_table(f.ftoptions) AS o
	WHERE o.option_name = 'use_remote_estimate' AND o.option_value = 'true'"),
	3 * @remote, "the moves made each foreign partition of the group ask its server for estimates");
# (the primary keys that the partitions keep, on the servers too)
is(join(' ', map { on($servers{$_}, "SELECT count(*) FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
	WHERE c.contype = 'p' AND t.relname ~ '^(customers|orders)_'") } sort keys %servers),
	join(' ', map { my $s = $_; 2 * grep { $server_of{$_} eq $s } keys %server_of } sort keys %servers),
	"the tables of customers and orders on each server have their primary keys");
like(result_or_error($coordinator, 'postgres', "INSERT INTO customers VALUES ($customer_of{$remote[0]}, 'again')"),
	qr/duplicate key value violates unique constraint/, "a customer of a bucket on a server twice: refused");

# (before 17, PostgreSQL joins the rows of one customer here: two small reads
# of its server, which the planner finds cheaper)
my $version = on($coordinator, "SHOW server_version_num");
for my $name (sort keys %queries)
{
	next if $name eq 'customer' && $version < 170000;
	my $query = $queries{$name} =~ s/CUSTOMER/$customer_of{$remote[0]}/r;
	my $plan = on($coordinator, "EXPLAIN (COSTS OFF) $query");
	my @joined = $name eq 'customers'
	  ? $plan =~ /Relations: \(customers_(\d+) c(?:_\d+)?\) INNER JOIN \(orders_\1 o(?:_\d+)?\)/g
	  : $plan =~ /Relations: \(orders_(\d+) o(?:_\d+)?\) INNER JOIN \(order_items_\1 i(?:_\d+)?\)/g;
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

# Back to one server, and the primary keys back to the tables.
($ret, $out, $err) = call_until_done($coordinator, "CALL rebalance('order_items', ARRAY[NULL]::name[])", 'public.orders');
is($ret, 0, 'rebalance of the group back to one server') or diag $err;
on($coordinator, "CALL unique_constraints_to_parent('customers'); CALL unique_constraints_to_parent('orders')");
is(on($coordinator, "SELECT string_agg(conname, ',' ORDER BY conname) FROM pg_constraint
	WHERE conrelid IN ('customers'::regclass, 'orders'::regclass) AND contype = 'p'")
	  . ' ' . on($coordinator, "SELECT count(*) FROM partition_placement WHERE server IS NOT NULL"),
	'customers_pkey,orders_pkey 0', "all here, the tables have their primary keys back");
is(join(' ', map { on($coordinator, $queries{$_}) } qw(whole restricted customers)),
	join(' ', map { $answer{$_} } qw(whole restricted customers)), "the answers are those of before");

done_testing();
