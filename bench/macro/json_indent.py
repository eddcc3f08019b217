"""JSON with the standard library: encoding nested records with indent and
sort_keys (which takes json's pure-Python encoder), then decoding them again.
Result: length and checksum of the text."""
import json
import zlib


def make_records(n):
    return [{"id": i, "name": "user %d" % i, "score": i * 0.25, "active": i % 3 == 0,
             "tags": ["t%d" % (i % 7), "g%d" % (i % 5)], "parent": None if i % 4 else i // 4,
             "address": {"street": "%d Main St" % i, "zip": "%05d" % (i * 37 % 100000),
                         "geo": [i / 7.0, -i / 3.0]}} for i in range(n)]


def run():
    records = make_records(6000)
    text = json.dumps(records, indent=2, sort_keys=True)
    again = json.loads(text)
    text2 = json.dumps({"records": again[:1200], "count": len(again)}, indent="\t", separators=(",", ": "))
    return len(text), len(text2), zlib.crc32((text + text2).encode())


if __name__ == "__main__":
    print(run())
