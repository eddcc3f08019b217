"""HTML pages from Jinja2 templates: inheritance, blocks, macros, loops with
loop variables, filters and autoescaping. Result: length and checksum."""
import zlib

import jinja2

TEMPLATES = {
    "base.html": """<!doctype html><html><head><title>{% block title %}{% endblock %}</title></head>
<body>{% block body %}{% endblock %}<footer>{{ footer }}</footer></body></html>""",
    "macros.html": """{% macro cell(value, cls='') -%}
<td{% if cls %} class="{{ cls }}"{% endif %}>{{ value }}</td>
{%- endmacro %}""",
    "page.html": """{% extends "base.html" %}{% from "macros.html" import cell %}
{% block title %}Orders for {{ customer.name }}{% endblock %}
{% block body %}<table>
{% for row in rows %}<tr class="{{ loop.cycle('odd', 'even') }}">
{{ cell(row.id) }}{{ cell(row.item) }}{{ cell('%.2f'|format(row.price), 'num') }}
{% if row.qty > 7 %}{{ cell('bulk', 'bulk') }}{% else %}{{ cell(row.tags|map('upper')|join(', ')) }}{% endif %}
</tr>{% endfor %}</table>
<p>Total: {{ '%.2f'|format(rows|sum(attribute='total')) }} in {{ rows|length }} rows,
first {{ (rows|first).item|truncate(12) }}, items {{ rows|map(attribute='item')|unique|list|length }}</p>
{% endblock %}""",
}


class Row:
    def __init__(self, i):
        self.id = i
        self.item = "item <%d> & co" % (i * 7 % 101)
        self.price = (i * 37 % 1000) / 7.0
        self.qty = i % 11
        self.total = self.price * self.qty
        self.tags = ["t%d" % (i % 5), "g%d" % (i % 3)]


def run():
    env = jinja2.Environment(loader=jinja2.DictLoader(TEMPLATES), autoescape=True)
    page = env.get_template("page.html")
    rows = [Row(i) for i in range(400)]
    pages = [page.render(customer={"name": "Ann & Bo #%d" % k}, rows=rows, footer="<end %d>" % k)
             for k in range(12)]
    text = "".join(pages)
    return len(text), zlib.crc32(text.encode())


if __name__ == "__main__":
    print(run())
