\set m random(0, 2000)
SELECT :m;
