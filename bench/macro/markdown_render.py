"""Markdown to HTML with Python-Markdown and its extensions (tables, fenced
code, footnotes, table of contents, abbreviations). Result: length and
checksum."""
import zlib

import markdown


def make_document(sections):
    parts = ["[TOC]\n\n# A Test Report\n\n*[HTML]: Hyper Text Markup Language\n\n"]
    for s in range(sections):
        parts.append("## Section %d\n\nSome *emphasis*, **strong**, `code`, a [link](http://x/%d "
                     "\"title\") and HTML in a footnote[^n%d].\n\n" % (s, s, s))
        parts.append("- item one\n- item two\n    1. nested\n    2. list\n\n")
        parts.append("> a quote with *markup*\n> on two lines\n\n")
        parts.append("| A | B | A or B |\n|---|:-:|---:|\n")
        for a in (0, 1):
            for b in (0, 1):
                parts.append("| %s | %s | %s |\n" % (bool(a), bool(b), bool(a or b)))
        parts.append("\n```python\ndef f(x):\n    return x * %d\n```\n\n" % s)
        parts.append("[^n%d]: Footnote %d with <b>html</b> & stuff.\n\n" % (s, s))
    return "".join(parts)


def run():
    md = markdown.Markdown(extensions=["tables", "fenced_code", "footnotes", "toc", "abbr"])
    html = md.convert(make_document(120))
    return len(html), zlib.crc32(html.encode())


if __name__ == "__main__":
    print(run())
