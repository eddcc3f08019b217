"""String building: joining, formatting (%, str.format, f-strings), slicing,
case changes, splitting, replacing, searching, encoding, and a small template
renderer and CSV round trip.

Stresses: the str type's C methods reached from Python loops, BUILD_STRING /
FORMAT_VALUE, string concatenation with +=, list.append + join.
Result: (total length, crc32 of the final text, counts).
"""

import zlib

ROWS = 6000

WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
         "hotel", "india", "juliet", "kilo", "lima", "mike", "november")


def make_rows(n):
    rows = []
    for i in range(n):
        w = WORDS[i % len(WORDS)]
        rows.append((i, w, i * 0.37, w[::-1].upper()))
    return rows


def to_csv(rows):
    lines = ["id,word,score,code"]
    for i, w, s, c in rows:
        lines.append("%d,%s,%.3f,%s" % (i, w, s, c))
    return "\n".join(lines)


def from_csv(text):
    out = []
    for line in text.split("\n")[1:]:
        i, w, s, c = line.split(",")
        out.append((int(i), w, float(s), c))
    return out


def render(template, values):
    """Replace {{name}} markers in template with values[name]."""
    parts = []
    pos = 0
    while True:
        start = template.find("{{", pos)
        if start < 0:
            parts.append(template[pos:])
            break
        end = template.find("}}", start)
        parts.append(template[pos:start])
        parts.append(str(values[template[start + 2:end].strip()]))
        pos = end + 2
    return "".join(parts)


def report(rows):
    text = ""
    for i, w, s, c in rows:
        if i % 5 == 0:
            text += f"[{i:05d}] {w.title():<10}|{s:>9.2f}|{c.lower()}\n"
        else:
            text += "{0}:{1}:{2}\n".format(i, w.capitalize(), c[:3])
    return text


def run():
    rows = make_rows(ROWS)
    csv = to_csv(rows)
    back = from_csv(csv)
    same = sum(1 for a, b in zip(rows, back) if a[0] == b[0] and a[1] == b[1] and a[3] == b[3])

    template = "Dear {{ name }}, your order #{{id}} of {{ qty }} x {{item}} ships {{when}}.\n"
    letters = []
    for i, w, s, c in rows:
        letters.append(render(template, {"name": w.title(), "id": i, "qty": i % 9 + 1,
                                         "item": c, "when": "today" if i % 2 else "tomorrow"}))
    body = "".join(letters)

    text = report(rows) + body
    text = text.replace("ECHO", "OHCE").replace("alpha", "ALPHA")
    words = text.split()
    vowels = sum(word.count("a") + word.count("e") for word in words)
    longest = max(words, key=len)
    title_case = sum(1 for word in words if word.istitle())
    encoded = text.encode("utf-8")
    return (len(text), zlib.crc32(encoded), same, len(words), vowels, longest, title_case)
