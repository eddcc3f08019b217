"""Text tools of the standard library on Python source: tokenize, ast.parse
with a NodeVisitor and ast.unparse, difflib's unified diff and
SequenceMatcher, textwrap.fill and string.Template. Result: counts and
checksum."""
import ast
import difflib
import inspect
import io
import string
import textwrap
import tokenize
import zlib


class Counter(ast.NodeVisitor):
    def __init__(self):
        self.counts = {}

    def generic_visit(self, node):
        name = type(node).__name__
        self.counts[name] = self.counts.get(name, 0) + 1
        super().generic_visit(node)


def run():
    source = inspect.getsource(difflib) + inspect.getsource(textwrap)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    tree = ast.parse(source)
    counter = Counter()
    counter.visit(tree)
    unparsed = ast.unparse(tree)
    old = source.splitlines()[:1400]
    new = [line.replace("self", "me") if i % 7 == 0 else line for i, line in enumerate(old)]
    diff = list(difflib.unified_diff(old, new, "a", "b", lineterm=""))
    ratio = difflib.SequenceMatcher(None, old[:600], new[:600]).ratio()
    docs = [ast.get_docstring(n) or "" for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    wrapped = "\n\n".join(textwrap.fill(d, width=50, initial_indent="> ") for d in docs)
    tmpl = string.Template("$name has ${count} nodes")
    lines = [tmpl.substitute(name=k, count=v) for k, v in sorted(counter.counts.items())]
    text = unparsed + "\n".join(diff) + wrapped + "\n".join(lines)
    return len(tokens), len(diff), round(ratio, 6), zlib.crc32(text.encode())


if __name__ == "__main__":
    print(run())
