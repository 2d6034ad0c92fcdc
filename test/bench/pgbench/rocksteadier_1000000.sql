\set m random(0, 2000000)
SELECT rocksteadier_subset(:m, 1000000, 20);
