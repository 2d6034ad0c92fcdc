\set k hash(random(1, 1000000000))
SELECT jumpbackhash(:k, 1000);
