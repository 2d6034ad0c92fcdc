\set k random(1, 100000)
SELECT name FROM users_opclass WHERE id = :k;
