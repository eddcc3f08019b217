"""HTML pages from Chameleon page templates (TAL/METAL compiled to Python):
tal:repeat, tal:condition, tal:attributes, structure and escaping. Result:
length and checksum."""
import zlib

from chameleon import PageTemplate

PAGE = """<html>
<head><title>Orders for ${customer}</title></head>
<body>
<table>
  <tr tal:repeat="row rows" class="${repeat.row.odd and 'odd' or 'even'}">
    <td tal:content="row['id']">id</td>
    <td tal:content="row['item']">item</td>
    <td tal:attributes="title row['tags'][0]">${'%.2f' % row['price']}</td>
    <td tal:condition="row['qty'] > 7" class="bulk">bulk</td>
    <td tal:condition="row['qty'] <= 7" tal:content="structure ', '.join(row['tags'])">tags</td>
  </tr>
</table>
<p>Total: ${'%.2f' % sum(r['price'] * r['qty'] for r in rows)}</p>
</body></html>"""


def make_rows(n):
    return [{"id": i, "item": "item <%d> & co" % (i * 7 % 101), "price": (i * 37 % 1000) / 7.0,
             "qty": i % 11, "tags": ["t%d" % (i % 5), "g%d" % (i % 3)]} for i in range(n)]


def run():
    tmpl = PageTemplate(PAGE)
    rows = make_rows(400)
    pages = [tmpl(customer="Ann & Bo #%d" % k, rows=rows) for k in range(36)]
    text = "".join(pages)
    return len(text), zlib.crc32(text.encode())


if __name__ == "__main__":
    print(run())
