\set k random(1, 100000)
SELECT name FROM users_native WHERE id = :k;
