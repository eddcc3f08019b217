"""reStructuredText to HTML with docutils: sections, lists, tables, inline
markup, literal blocks, footnotes and references. Result: length and
checksum of the HTML body."""
import zlib

from docutils.core import publish_parts


def make_document(sections):
    parts = ["=============\nA Test Report\n=============\n\n.. contents::\n\n"]
    for s in range(sections):
        parts.append("Section %d\n==========\n\n" % s)
        parts.append("Some *emphasis*, **strong** text, ``literal`` and a reference_ [#f%d]_.\n\n" % s)
        parts.append("- item one of %d\n- item two with `interpreted`\n\n  - nested item\n\n" % s)
        parts.append("1. first\n2. second\n3. third\n\n")
        parts.append("=====  =====  ======\n  A      B    A or B\n=====  =====  ======\n")
        for a in (0, 1):
            for b in (0, 1):
                parts.append("%-5s  %-5s  %-6s\n" % (bool(a), bool(b), bool(a or b)))
        parts.append("=====  =====  ======\n\n")
        parts.append("Example::\n\n    def f(x):\n        return x * %d\n\n" % s)
        parts.append(".. note:: This is note number %d.\n\n" % s)
        parts.append(".. [#f%d] Footnote %d text.\n\n" % (s, s))
    parts.append(".. _reference: http://example.com/\n")
    return "".join(parts)


def run():
    html = publish_parts(make_document(30), writer_name="html",
                         settings_overrides={"report_level": 5, "_disable_config": True})["body"]
    return len(html), zlib.crc32(html.encode())


if __name__ == "__main__":
    print(run())
