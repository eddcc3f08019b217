"""HTML pages from Django's template engine, used standalone: extends and
blocks, for loops with forloop, if/else, filters, includes and autoescaping.
Result: length and checksum."""
import zlib

import django
from django.conf import settings

settings.configure(TEMPLATES=[{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "OPTIONS": {"loaders": [("django.template.loaders.locmem.Loader", {
        "base.html": "<html><head><title>{% block title %}{% endblock %}</title></head>"
                     "<body>{% block body %}{% endblock %}<footer>{{ footer }}</footer></body></html>",
        "row.html": "<tr class=\"{% cycle 'odd' 'even' %}\"><td>{{ row.id }}</td><td>{{ row.item }}</td>"
                    "<td>{{ row.price|floatformat:2 }}</td>"
                    "{% if row.qty > 7 %}<td class=\"bulk\">bulk</td>"
                    "{% else %}<td>{{ row.tags|join:\", \"|upper }}</td>{% endif %}</tr>",
        "page.html": "{% extends \"base.html\" %}{% block title %}Orders for {{ customer }}{% endblock %}"
                     "{% block body %}<table>{% for row in rows %}{% include \"row.html\" %}"
                     "{% empty %}<tr><td>none</td></tr>{% endfor %}</table>"
                     "<p>{{ rows|length }} rows, first {{ rows.0.item|truncatechars:12 }}, "
                     "{{ customer|lower|title }}</p>{% endblock %}",
    })]},
}])
django.setup()

from django.template import engines  # noqa: E402


def make_rows(n):
    return [{"id": i, "item": "item <%d> & co" % (i * 7 % 101), "price": (i * 37 % 1000) / 7.0,
             "qty": i % 11, "tags": ["t%d" % (i % 5), "g%d" % (i % 3)]} for i in range(n)]


def run():
    page = engines["django"].from_string('{% include "page.html" %}')
    rows = make_rows(300)
    pages = [page.render({"customer": "Ann & Bo #%d" % k, "rows": rows, "footer": "<end %d>" % k})
             for k in range(8)]
    text = "".join(pages)
    return len(text), zlib.crc32(text.encode())


if __name__ == "__main__":
    print(run())
