\set k random(1, 100000)
SELECT name FROM users_list WHERE jumpbackhash(id, 16) = jumpbackhash(:k, 16) AND id = :k;
