\set m random(0, 2000)
SELECT ringsteady_subset(:m, 1000, 20);
