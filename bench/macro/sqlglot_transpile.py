"""SQL with sqlglot: parsing queries, transpiling them between dialects,
optimizing them against a schema and walking their trees. Result: the
generated SQL's length and checksum."""
import zlib

import sqlglot
from sqlglot.optimizer import optimize

QUERIES = [
    "SELECT a, SUM(b) AS total FROM t WHERE c > 10 AND d LIKE 'x%' GROUP BY a HAVING SUM(b) > 5 ORDER BY total DESC LIMIT 10",
    "WITH x AS (SELECT id, name FROM users WHERE active = 1) SELECT x.name, COUNT(o.id) FROM x LEFT JOIN orders AS o ON o.user_id = x.id GROUP BY x.name",
    "SELECT CASE WHEN price > 100 THEN 'high' WHEN price > 10 THEN 'mid' ELSE 'low' END AS band, AVG(price) FROM items GROUP BY 1",
    "SELECT u.id, (SELECT MAX(o.amount) FROM orders AS o WHERE o.user_id = u.id) AS m FROM users AS u WHERE u.id IN (SELECT user_id FROM orders WHERE amount > 50)",
    "SELECT DATE_TRUNC('month', created) AS m, COUNT(DISTINCT user_id) FROM events WHERE kind IN ('a', 'b', 'c') GROUP BY 1 ORDER BY 1",
    "SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY c DESC) AS rn, LAG(c, 1) OVER (ORDER BY c) FROM t2",
    "INSERT INTO archive (id, v) SELECT id, COALESCE(v, 0) + 1 FROM t3 WHERE NOT v IS NULL UNION ALL SELECT 0, 0",
]

SCHEMA = {"t": {"a": "INT", "b": "INT", "c": "INT", "d": "TEXT"},
          "users": {"id": "INT", "name": "TEXT", "active": "INT"},
          "orders": {"id": "INT", "user_id": "INT", "amount": "DOUBLE"},
          "items": {"price": "DOUBLE"}}


def run():
    out = []
    for round_ in range(4):
        for sql in QUERIES:
            for dialect in ("duckdb", "spark", "mysql", "bigquery"):
                out.extend(sqlglot.transpile(sql, read="postgres", write=dialect, pretty=round_ == 0))
            tree = sqlglot.parse_one(sql, read="postgres")
            out.append(str(len(list(tree.walk()))))
            out.append(",".join(sorted(c.name for c in tree.find_all(sqlglot.exp.Column))))
    for sql in QUERIES[:4]:
        out.append(optimize(sqlglot.parse_one(sql), schema=SCHEMA).sql(pretty=True))
    text = "\n".join(out)
    return len(text), zlib.crc32(text.encode())


if __name__ == "__main__":
    print(run())
