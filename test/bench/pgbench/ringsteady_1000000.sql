\set m random(0, 2000000)
SELECT ringsteady_subset(:m, 1000000, 20);
