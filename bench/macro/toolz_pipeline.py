"""Functional data pipelines with toolz (pure Python): curry, pipe,
groupby, reduceby, merge_with, frequencies, sliding windows, partition,
unique and dictionary transforms over generated records. Result: the
pipeline's aggregates."""
import operator

import toolz
from toolz import curried as c


def make_records(n):
    return [{"id": i, "city": "c%d" % (i % 17), "kind": ("a", "b", "c")[i % 3],
             "amount": (i * 37 % 101) / 4.0, "items": list(range(i % 5))} for i in range(n)]


def run():
    records = make_records(30000)
    by_city = toolz.groupby("city", records)
    totals = toolz.valmap(lambda rs: round(sum(r["amount"] for r in rs), 2), by_city)
    kinds = toolz.reduceby("kind", lambda acc, r: acc + r["amount"], records, 0.0)
    merged = toolz.merge_with(sum, *({r["city"]: len(r["items"])} for r in records[:10000]))
    freq = toolz.frequencies(r["kind"] + r["city"] for r in records)
    windows = toolz.pipe(records, c.map(c.get("amount")), c.sliding_window(5),
                         c.map(lambda w: sum(w) / 5), c.filter(lambda a: a > 12), c.take(10000), list)
    chunks = toolz.pipe(records, c.pluck("id"), c.partition_all(7), c.map(sum), list)
    uniq = list(toolz.unique((r["amount"] for r in records), key=round))
    big = toolz.pipe(records, c.filter(lambda r: r["amount"] > 12), c.map(lambda r: toolz.assoc(r, "flag", 1)),
                     c.map(lambda r: toolz.dissoc(r, "items")), c.map(c.keymap(str.upper)), list)
    inc = toolz.compose(c.map(operator.neg), c.concat)
    flat = sum(inc(r["items"] for r in records[:7500]))
    return (sorted(totals.items())[:3], sorted((k, round(v, 2)) for k, v in kinds.items()),
            sum(merged.values()), max(freq.values()), len(windows), sum(chunks), len(uniq),
            len(big), big[0]["ID"] if big else None, flat)


if __name__ == "__main__":
    print(run())
