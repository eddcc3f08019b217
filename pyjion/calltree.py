"""The profiler's call tree: time and calls per call path, as pyinstrument shows them.

The flat profile (pyjion.profile) says how long each function took in all; the tree says along
which paths: ``main -> parse -> tokenize`` and ``main -> render -> tokenize`` are two nodes.
It is kept while the profiler runs (``pyjion.enable(profile=True)``), bounded in depth and size
(``pyjion.config(tree_depth=..., tree_nodes=...)``: deeper paths, and new paths once the tree is
full, are charged to their deepest recorded ancestor). Each thread has a root of its own.

    >>> import pyjion, pyjion.calltree
    >>> pyjion.enable(profile=True); work(); pyjion.disable()
    >>> pyjion.calltree.print_tree()                     # hot paths first
    >>> roots = pyjion.calltree.call_tree()              # [Node] per thread

``python -m pyjion --profile --tree script.py`` prints it; pyjion.flamegraph writes it for a
flame-graph viewer.
"""
import os
import sys

from . import _eval

__all__ = ["Node", "call_tree", "print_tree", "format_tree"]


class Node:
    """One call path. `name`: (filename, first line, function name); for a C function that
    machine code called, ("~", 0, its cProfile label such as "<built-in method builtins.sorted>");
    ("<thread>", ident, thread name) for a thread's root; `calls`; `total_time` (seconds, the path's outermost calls,
    callees included); `own_time` (seconds in the function itself); `children`: [Node], the
    slowest first. A root's times are its children's."""

    __slots__ = ("name", "calls", "total_time", "own_time", "children", "thread")

    def __init__(self, name, thread, calls=0, total_time=0.0, own_time=0.0):
        self.name = name
        self.thread = thread
        self.calls = calls
        self.total_time = total_time
        self.own_time = own_time
        self.children = []

    @property
    def is_root(self):
        return self.name[0] == "<thread>"

    def label(self, strip_dirs=True):
        if self.is_root:
            return "thread %s" % (self.name[2] or self.name[1])
        filename, line, func = self.name
        if filename == "~":
            return func
        return "%s  %s:%d" % (func, os.path.basename(filename) if strip_dirs else filename, line)

    def walk(self, depth=0):
        """(depth, node) for this node and everything below it, depth first."""
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)

    def __repr__(self):
        return "<Node %s calls=%d total=%.6f own=%.6f children=%d>" % (
            self.label(), self.calls, self.total_time, self.own_time, len(self.children))


def _thread_names():
    import threading
    return {t.ident: t.name for t in threading.enumerate()}


def call_tree(data=None):
    """The tree as [Node], one root per thread that made profiled calls. Paths whose functions
    carry the same name (two code objects of one function, as after a re-import) are merged,
    as the flat profile merges them. data: what _eval.call_tree() returns (default: now)."""
    if data is None:
        data = _eval.call_tree()
    names = _thread_names()
    made = []          # per raw node: the Node it was merged into
    roots = []
    index = {}         # (id of parent Node, name) -> Node
    for code, thread, parent, calls, total, own in data["nodes"]:
        if code is None:
            node = Node(("<thread>", thread, names.get(thread, "")), thread)
            roots.append(node)
            made.append(node)
            continue
        up = made[parent]
        if isinstance(code, str):       # a C function: its label, keyed as in the flat profile
            name = ("~", 0, code)
        else:
            name = (code.co_filename, code.co_firstlineno, code.co_qualname)
        node = index.get((id(up), name))
        if node is None:
            node = index[(id(up), name)] = Node(name, up.thread)
            up.children.append(node)
        node.calls += calls
        node.total_time += total
        node.own_time += own
        made.append(node)
    for root in roots:
        root.total_time = sum(c.total_time for c in root.children)
        root.calls = sum(c.calls for c in root.children)
    for root in roots:
        for _, node in root.walk():
            node.children.sort(key=lambda n: n.total_time, reverse=True)
    return [r for r in roots if r.children]


def format_tree(roots=None, min_percent=0.5, max_depth=None, strip_dirs=True):
    """The tree as text lines, hottest paths first, each line: share of its thread's time,
    total and own seconds, calls, the function and where it is. Paths below `min_percent` of
    their thread's time are left out (a line says how many); `max_depth` cuts deeper levels."""
    if roots is None:
        roots = call_tree()
    lines = []
    for root in roots:
        whole = root.total_time or 1e-12
        lines.append("%s: %.3f s in %d calls" % (root.label(), root.total_time, root.calls))
        lines.append("  %6s %9s %9s %9s" % ("total%", "total s", "own s", "calls"))

        def show(node, prefix, depth):
            shown = [c for c in node.children if 100.0 * c.total_time / whole >= min_percent]
            hidden = len(node.children) - len(shown)
            if max_depth is not None and depth >= max_depth:
                hidden, shown = len(node.children), []
            for i, child in enumerate(shown):
                last = i == len(shown) - 1 and hidden == 0
                branch = "└─ " if last else "├─ "
                lines.append("  %5.1f%% %9.3f %9.3f %9d  %s%s" % (
                    100.0 * child.total_time / whole, child.total_time, child.own_time, child.calls,
                    prefix + branch, child.label(strip_dirs)))
                show(child, prefix + ("   " if last else "│  "), depth + 1)
            if hidden:
                lines.append("  %6s %9s %9s %9s  %s└─ (%d more below %.1f%%)" % (
                    "", "", "", "", prefix, hidden, min_percent))

        show(root, "", 0)
    return lines


def print_tree(roots=None, min_percent=0.5, max_depth=None, stream=None, strip_dirs=True):
    """Prints format_tree()'s lines (to stdout by default)."""
    stream = stream if stream is not None else sys.stdout
    for line in format_tree(roots, min_percent, max_depth, strip_dirs):
        stream.write(line + "\n")
