"""HTML pages from Mako templates: inheritance, defs, loops, filters and
expressions over a table of rows. Result: the pages' length and checksum."""
import zlib

from mako.lookup import TemplateLookup

BASE = """<html><head><title>${self.title()}</title></head>
<body>
<%block name="header"><h1>${self.title()}</h1></%block>
${next.body()}
<footer>${footer | h}</footer>
</body></html>
<%def name="title()">Report</%def>
"""

PAGE = """<%inherit file="base.html"/>
<%def name="title()">Orders for ${customer.name | h}</%def>
<%def name="money(value)">${"%.2f" % value}</%def>
<table>
% for i, row in enumerate(rows):
  <tr class="${'odd' if i % 2 else 'even'}">
    <td>${row['id']}</td><td>${row['item'] | h}</td>
    <td>${money(row['price'])}</td><td>${row['qty']}</td>
    % if row['qty'] > 7:
    <td class="bulk">bulk</td>
    % else:
    <td>${', '.join(tag.upper() for tag in row['tags'])}</td>
    % endif
  </tr>
% endfor
</table>
<p>Total: ${money(sum(r['price'] * r['qty'] for r in rows))}</p>
"""


class Customer:
    def __init__(self, name):
        self.name = name


def make_rows(n):
    return [{"id": i, "item": "item <%d> & co" % (i * 7 % 101), "price": (i * 37 % 1000) / 7.0,
             "qty": i % 11, "tags": ["t%d" % (i % 5), "g%d" % (i % 3)]} for i in range(n)]


def run():
    lookup = TemplateLookup()
    lookup.put_string("base.html", BASE)
    lookup.put_string("page.html", PAGE)
    page = lookup.get_template("page.html")
    rows = make_rows(400)
    pages = [page.render(customer=Customer("Ann & Bo #%d" % k), rows=rows, footer="<end %d>" % k)
             for k in range(75)]
    text = "".join(pages)
    return len(text), zlib.crc32(text.encode())


if __name__ == "__main__":
    print(run())
