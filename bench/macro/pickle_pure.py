"""The standard library's pure-Python pickler and unpickler (pickle._Pickler,
pickle._Unpickler) on nested records, objects and shared references, over
protocols 0, 2 and 5. Result: sizes and checksum of the pickles."""
import io
import pickle
import zlib


class Account:
    def __init__(self, number, owner, balance):
        self.number = number
        self.owner = owner
        self.balance = balance
        self.history = [(i, balance / (i + 1)) for i in range(5)]


def make_data(n):
    owners = ["owner-%d" % i for i in range(20)]
    return {"accounts": [Account(i, owners[i % 20], i * 10.5) for i in range(n)],
            "index": {i: "k%d" % i for i in range(n)}, "flags": [True, False, None] * 50,
            "blob": bytes(range(256)) * 4, "big": [2 ** 70 + i for i in range(40)],
            "nested": [[[i, j] for j in range(5)] for i in range(40)], "set": set(range(100))}


def round_trip(data, protocol):
    buf = io.BytesIO()
    pickle._Pickler(buf, protocol=protocol).dump(data)
    raw = buf.getvalue()
    back = pickle._Unpickler(io.BytesIO(raw)).load()
    return raw, back


def run():
    data = make_data(1000)
    sizes, crc = [], 0
    for protocol in (0, 2, 5):
        raw, back = round_trip(data, protocol)
        assert back["accounts"][7].history == data["accounts"][7].history
        sizes.append(len(raw))
        crc = zlib.crc32(raw, crc)
    return sizes, crc


if __name__ == "__main__":
    print(run())
