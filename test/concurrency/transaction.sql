-- test/concurrency/transaction.sql
--	One pgbench transaction of test/run-concurrency-tests: every function of
--	the extension on one input picked at random (test/concurrency/setup.sql).
\set id random(1, 3000)
INSERT INTO results SELECT * FROM calls WHERE id = :id;
