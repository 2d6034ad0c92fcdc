\set k hash(random(1, 1000000000))
SELECT ring_nodes((SELECT ring FROM rings WHERE part_power = 22), :k::bigint);
