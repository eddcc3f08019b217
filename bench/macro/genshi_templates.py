"""XHTML pages from Genshi markup templates: py:for, py:if, py:attrs,
py:def, expressions and escaping, serialized as HTML. Result: length and
checksum."""
import zlib

from genshi.template import MarkupTemplate

PAGE = """<html xmlns:py="http://genshi.edgewall.org/">
<py:def function="money(value)">${'%.2f' % value}</py:def>
<head><title>Orders for ${customer}</title></head>
<body>
<table>
  <tr py:for="i, row in enumerate(rows)" class="${i % 2 and 'odd' or 'even'}">
    <td>${row['id']}</td><td>${row['item']}</td><td>${money(row['price'])}</td>
    <td py:if="row['qty'] &gt; 7" class="bulk">bulk</td>
    <td py:if="row['qty'] &lt;= 7" py:attrs="{'title': row['tags'][0]}">${', '.join(row['tags'])}</td>
  </tr>
</table>
<p>Total: ${money(sum(r['price'] * r['qty'] for r in rows))}</p>
</body></html>"""


def make_rows(n):
    return [{"id": i, "item": "item <%d> & co" % (i * 7 % 101), "price": (i * 37 % 1000) / 7.0,
             "qty": i % 11, "tags": ["t%d" % (i % 5), "g%d" % (i % 3)]} for i in range(n)]


def run():
    tmpl = MarkupTemplate(PAGE)
    rows = make_rows(150)
    pages = [tmpl.generate(customer="Ann & Bo #%d" % k, rows=rows).render("html", doctype="html")
             for k in range(15)]
    text = "".join(pages)
    return len(text), zlib.crc32(text.encode())


if __name__ == "__main__":
    print(run())
