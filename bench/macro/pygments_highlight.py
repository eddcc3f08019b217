"""Syntax highlighting with Pygments: Python, C and JavaScript sources lexed
by regex lexers and formatted as HTML and as terminal text. Result: lengths
and checksum."""
import inspect
import zlib

from pygments import highlight
from pygments.formatters import HtmlFormatter, TerminalFormatter
from pygments.lexers import CLexer, JavascriptLexer, PythonLexer
import textwrap

C_SOURCE = """
#include <stdio.h>
/* a comment */
static int table[256];
struct point { double x, y; };
int main(int argc, char **argv) {
    for (int i = 0; i < argc; i++) { printf("%s %d\\n", argv[i], table[i & 255]); }
    return argc > 1 ? 0 : 1;
}
""" * 60

JS_SOURCE = """
// a comment
const f = (a, b = 2) => { return a * b + `${a} ok`; };
class Point { constructor(x, y) { this.x = x; this.y = y; } norm() { return Math.hypot(this.x, this.y); } }
let re = /ab+c/gi, n = 0x1f, s = 'str\\n';
async function g() { for await (const x of items()) { if (x?.y ?? false) n++; } }
""" * 40


def run():
    py_source = inspect.getsource(textwrap) * 3
    html = highlight(py_source, PythonLexer(), HtmlFormatter(linenos=True))
    html += highlight(C_SOURCE, CLexer(), HtmlFormatter())
    term = highlight(JS_SOURCE, JavascriptLexer(), TerminalFormatter())
    return len(html), len(term), zlib.crc32((html + term).encode())


if __name__ == "__main__":
    print(run())
