\set m random(0, 2000)
SELECT rocksteadier_subset(:m, 1000, 20);
