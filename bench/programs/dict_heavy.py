"""Dictionary workloads: word frequencies, grouping, inverted index, memo
tables, dict comprehensions, merging with | and update, get / setdefault /
pop, iteration over items, tuple keys.

Stresses: BINARY_SUBSCR / STORE_SUBSCR on dicts, dict methods, hashing of str,
int and tuple keys, iteration. Result: integer checksums (independent of
string hash randomisation: only insertion order and sorted views are used).
"""

DOCS = 2000
WORDS_PER_DOC = 60

VOCAB = ["w%03d" % i for i in range(300)]


def documents():
    seed = 12345
    docs = []
    for _ in range(DOCS):
        doc = []
        for _ in range(WORDS_PER_DOC):
            seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
            doc.append(VOCAB[(seed >> 8) % len(VOCAB)])
        docs.append(doc)
    return docs


def frequencies(docs):
    freq = {}
    for doc in docs:
        for w in doc:
            freq[w] = freq.get(w, 0) + 1
    return freq


def inverted_index(docs):
    index = {}
    for n, doc in enumerate(docs):
        for w in doc:
            index.setdefault(w, {})[n] = True
    return index


def bigrams(docs):
    pairs = {}
    for doc in docs:
        prev = None
        for w in doc:
            if prev is not None:
                key = (prev, w)
                if key in pairs:
                    pairs[key] += 1
                else:
                    pairs[key] = 1
            prev = w
    return pairs


def grid_paths(w, h):
    memo = {}
    for x in range(w + 1):
        for y in range(h + 1):
            if x == 0 or y == 0:
                memo[x, y] = 1
            else:
                memo[x, y] = (memo[x - 1, y] + memo[x, y - 1]) % 1000000007
    return memo[w, h]


def run():
    docs = documents()
    freq = frequencies(docs)
    index = inverted_index(docs)
    pairs = bigrams(docs)

    by_count = {}
    for w, c in freq.items():
        by_count.setdefault(c, []).append(w)
    top = sorted(by_count)[-3:]

    rare = {w: c for w, c in freq.items() if c < 75}
    merged = rare | {w: -1 for w in VOCAB[::7]}
    merged.update({"extra%d" % i: i for i in range(50)})
    removed = 0
    for w in VOCAB[::5]:
        removed += merged.pop(w, 0)

    docs_per_word = {w: len(d) for w, d in index.items()}
    common_pairs = sum(1 for c in pairs.values() if c > 1)
    checksum = 0
    for w in sorted(docs_per_word):
        checksum = (checksum * 131 + docs_per_word[w] + freq[w]) % 1000000007
    return (len(freq), top, len(merged), removed, len(pairs), common_pairs,
            checksum, grid_paths(120, 120))
