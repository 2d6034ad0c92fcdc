\set k hash(random(1, 1000000000))
SELECT abs(hashint8(:k)) % 1000;
