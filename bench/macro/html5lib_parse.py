"""HTML parsing with html5lib (the WHATWG algorithm in pure Python): a
generated page with tables, forms, entities and sloppy markup, parsed into an
ElementTree and serialized again. Result: element count, length and
checksum."""
import zlib

import html5lib


def make_page(rows):
    out = ["<!DOCTYPE html><html><head><title>T &amp; t</title><style>p{x:y}</style></head><body>"]
    for i in range(rows):
        out.append('<div class="row r%d" id=d%d><p>Para %d &copy; &lt;b&gt; <b>bold <i>both</b> it</i>'
                   % (i % 7, i, i))
        out.append('<table><tr><td>%d<td>%s<tr><td colspan=2>x &amp y</table>' % (i, "w" * (i % 9)))
        out.append('<ul><li>one<li>two<li><a href="/p?a=%d&b=2">link</a></ul>' % i)
        out.append('<form><input name=q value="v%d"><select><option>a<option selected>b</select></form>'
                   % i)
        out.append("<!-- comment %d --></div>\n" % i)
    out.append("</body></html>")
    return "".join(out)


def run():
    tree = html5lib.parse(make_page(240), treebuilder="etree", namespaceHTMLElements=False)
    count = sum(1 for _ in tree.iter())
    text = html5lib.serialize(tree, tree="etree")
    return count, len(text), zlib.crc32(text.encode())


if __name__ == "__main__":
    print(run())
