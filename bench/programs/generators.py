"""Generator pipelines: lazily chained stages (source -> filter -> map ->
sliding window -> chunking), yield from delegation, generator expressions,
send() into a coroutine-style accumulator, and a tree walk by recursion with
yield from.

Stresses: generator creation, resumption and teardown (RETURN_GENERATOR,
YIELD_VALUE, SEND, FOR_ITER on generators), closures over loop state.
Result: a tuple of integer checksums.
"""

COUNT = 150000
TREE_DEPTH = 13


def numbers(n):
    i = 0
    while i < n:
        yield i
        i += 1


def keep(pred, items):
    for x in items:
        if pred(x):
            yield x


def apply(fn, items):
    for x in items:
        yield fn(x)


def windows(items, size):
    window = []
    for x in items:
        window.append(x)
        if len(window) > size:
            del window[0]
        if len(window) == size:
            yield tuple(window)


def chunks(items, size):
    chunk = []
    for x in items:
        chunk.append(x)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def chained(*sources):
    for src in sources:
        yield from src


def averager():
    total = 0
    count = 0
    average = None
    while True:
        value = yield average
        if value is None:
            return total
        total += value
        count += 1
        average = total // count


def tree(depth, label=1):
    if depth == 0:
        return
    yield from tree(depth - 1, label * 2)
    yield label
    yield from tree(depth - 1, label * 2 + 1)


def run():
    staged = apply(lambda x: x * x % 1009,
                   keep(lambda x: x % 3 != 0, numbers(COUNT)))
    a = sum(w[0] - w[1] + w[2] for w in windows(staged, 3))

    b = 0
    for chunk in chunks(chained(numbers(COUNT // 3), range(COUNT // 3, 0, -1)), 7):
        b = (b * 7 + sum(chunk)) % 1000003

    acc = averager()
    next(acc)
    last = 0
    for v in (x % 97 for x in numbers(COUNT) if x & 1):
        last = acc.send(v)
    try:
        acc.send(None)
        c = None
    except StopIteration as stop:
        c = stop.value

    d = 0
    for label in tree(TREE_DEPTH):
        d = (d * 3 + label) % 1000000007

    # (two generator expressions on one line would share a (file, line, name) key)
    odd = (y for y in range(COUNT) if y % 2)
    e = sum(1 for _ in zip(numbers(COUNT), odd))
    return (a, b, last, c, d, e)
