\set k hash(random(1, 1000000000))
INSERT INTO events_opclass VALUES (:k, 1);
