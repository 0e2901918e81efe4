-- A small sqlite workload for the inline bench: inserts, an index, joins,
-- sorting and aggregates, about 2 s of CPU on an idle machine.
CREATE TABLE t(a INTEGER PRIMARY KEY, b INTEGER, c TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
INSERT INTO t SELECT i, abs(random()) % 1000, hex(randomblob(8)) FROM n;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(length(c)) FROM t WHERE b < 500;
SELECT b, count(*), max(c) FROM t GROUP BY b ORDER BY 2 DESC LIMIT 3;
SELECT count(*) FROM t x JOIN t y ON x.b = y.b AND y.a = x.a + 1;
SELECT substr(group_concat(c), 1, 16) FROM (SELECT c FROM t ORDER BY c LIMIT 50000);
UPDATE t SET c = upper(c) WHERE a % 3 = 0;
SELECT count(DISTINCT c) FROM t;
