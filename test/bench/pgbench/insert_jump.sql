\set k hash(random(1, 1000000000))
INSERT INTO events_jump VALUES (:k, 1);
