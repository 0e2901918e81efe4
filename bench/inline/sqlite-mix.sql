-- A second sqlite workload for the inline bench, another query mix than
-- sqlite-work.sql: JSON, window functions, LIKE and string functions, a
-- trigger, a view, upserts and deletes, about 1-2 s of CPU when idle.
CREATE TABLE ev(id INTEGER PRIMARY KEY, k TEXT, v REAL, doc TEXT);
CREATE TABLE tot(k TEXT PRIMARY KEY, n INTEGER, s REAL);
CREATE TRIGGER ev_ins AFTER INSERT ON ev BEGIN
  INSERT INTO tot VALUES (new.k, 1, new.v)
    ON CONFLICT(k) DO UPDATE SET n = n + 1, s = s + excluded.s;
END;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
INSERT INTO ev(k, v, doc)
  SELECT printf('key-%03d', i % 397), (i * 7919 % 10007) / 100.0,
         json_object('i', i, 'tag', char(97 + i % 26) || char(97 + i % 7),
                     'xs', json_array(i % 5, i % 11, i % 13))
  FROM n;
CREATE VIEW evx AS
  SELECT id, k, v, json_extract(doc, '$.tag') AS tag,
         json_extract(doc, '$.xs[1]') AS x1 FROM ev;
SELECT tag, count(*), round(avg(v), 2) FROM evx WHERE tag LIKE 'c%' GROUP BY tag;
SELECT k, v, rank() OVER (PARTITION BY k ORDER BY v DESC) AS r,
       sum(v) OVER (PARTITION BY k ORDER BY id ROWS 5 PRECEDING) AS w
  FROM ev WHERE id % 7 = 0 ORDER BY w DESC LIMIT 5;
SELECT count(*) FROM ev WHERE instr(doc, '"tag":"q') > 0 OR k GLOB '*-1?3';
SELECT sum(json_array_length(doc, '$.xs')), max(length(replace(doc, 'a', 'xyz'))) FROM ev;
CREATE INDEX ev_kv ON ev(k, v);
SELECT k, n, round(s, 1) FROM tot ORDER BY s DESC LIMIT 3;
DELETE FROM ev WHERE v > 80 AND k IN (SELECT k FROM tot WHERE n % 2 = 0);
SELECT count(*), min(id), max(id) FROM ev;
SELECT x1, count(DISTINCT k), group_concat(DISTINCT substr(tag, 2)) FROM evx GROUP BY x1;
