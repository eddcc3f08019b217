"""The profiler's call tree (pyjion.calltree) for flame-graph viewers.

- speedscope's file format (https://www.speedscope.app/file-format-schema.json): one "sampled"
  profile per thread whose samples are the tree's paths, each weighted by the seconds spent in
  its own function; open the file at speedscope.app or with its command-line viewer.
- A self-contained HTML page with an SVG flame graph (no network, no other file): one block
  per call path, as wide as its share of the time; hover shows its figures, a click zooms
  into it, Escape or a click on the root zooms out.

    >>> import pyjion.flamegraph
    >>> pyjion.flamegraph.dump_speedscope("out.speedscope.json")
    >>> pyjion.flamegraph.dump_html("out.html")

``python -m pyjion --profile -o out.html script.py`` (or ``-o out.speedscope.json``) writes them.
"""
import html
import json

from . import calltree

__all__ = ["speedscope", "dump_speedscope", "html_page", "dump_html"]

SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def _roots(roots):
    return calltree.call_tree() if roots is None else roots


def speedscope(roots=None, name="pyjion profile"):
    """The tree as a speedscope document (a dict ready for json.dump)."""
    frames, frame_index, profiles = [], {}, []

    def frame_of(node):
        key = node.name
        if key not in frame_index:
            filename, line, func = key
            frame_index[key] = len(frames)
            if filename == "~":         # a C function: no file
                frames.append({"name": func})
            else:
                frames.append({"name": func, "file": filename, "line": line})
        return frame_index[key]

    for root in _roots(roots):
        samples, weights = [], []

        def visit(node, stack):
            stack = stack + [frame_of(node)]
            if node.own_time > 0:
                samples.append(stack)
                weights.append(node.own_time)
            for child in node.children:
                visit(child, stack)

        for child in root.children:
            visit(child, [])
        profiles.append({"type": "sampled", "name": root.label(), "unit": "seconds",
                         "startValue": 0, "endValue": sum(weights),
                         "samples": samples, "weights": weights})
    return {"$schema": SPEEDSCOPE_SCHEMA, "name": name, "exporter": "pyjion",
            "activeProfileIndex": 0, "shared": {"frames": frames}, "profiles": profiles}


def dump_speedscope(path, roots=None, name="pyjion profile"):
    with open(path, "w") as f:
        json.dump(speedscope(roots, name), f)
    return path


# ---- HTML / SVG -------------------------------------------------------------------------

_ROW = 18          # pixels per tree level
_WIDTH = 1200      # the graph's width in SVG units (the page scales it to the window)
_MIN_WIDTH = 0.3   # paths narrower than this are left out


def _colour(name):
    """A warm colour per function, the same every time for one name."""
    h = 0
    for ch in name:
        h = (h * 31 + ord(ch)) & 0xFFFFFF
    return "rgb(%d,%d,%d)" % (205 + h % 50, 80 + (h >> 8) % 120, 40 + (h >> 16) % 50)


def _blocks(roots):
    """(x, width, depth, node, id, parent id) per path that is wide enough, roots at depth 0.
    Several threads share the width by their time."""
    roots = [r for r in roots if r.total_time > 0]
    whole = sum(r.total_time for r in roots) or 1.0
    blocks, x = [], 0.0
    for root in roots:
        stack = [(root, x, _WIDTH * root.total_time / whole, 0, -1)]
        while stack:
            node, left, width, depth, parent = stack.pop()
            ident = len(blocks)
            blocks.append((left, width, depth, node, ident, parent))
            inner = sum(c.total_time for c in node.children) or 1.0
            # Children share their parent's width by time; their times can add up to more
            # than the parent's where a path was folded (bounded tree), so scale them in.
            scale = width / max(node.total_time, inner) if node.total_time > 0 else 0.0
            cx = left
            for child in node.children:
                cw = child.total_time * scale
                if cw >= _MIN_WIDTH:
                    stack.append((child, cx, cw, depth + 1, ident))
                cx += cw
        x += _WIDTH * root.total_time / whole
    return blocks


_SCRIPT = """
(function () {
  var svg = document.getElementById('flame');
  var info = document.getElementById('info');
  var rects = Array.prototype.slice.call(svg.querySelectorAll('g.node'));
  var W = %(width)d;
  function zoom(g) {
    var x0 = parseFloat(g.dataset.x), w0 = parseFloat(g.dataset.w), d0 = parseInt(g.dataset.depth, 10);
    rects.forEach(function (n) {
      var x = parseFloat(n.dataset.x), w = parseFloat(n.dataset.w), d = parseInt(n.dataset.depth, 10);
      var inside = x + w > x0 + 1e-9 && x < x0 + w0 - 1e-9 && (d >= d0 || (x <= x0 && x + w >= x0 + w0));
      n.style.display = inside ? '' : 'none';
      if (!inside) return;
      var nx = (Math.max(x, x0) - x0) * W / w0, nw = Math.min(w, w0) * W / w0;
      var r = n.querySelector('rect'), t = n.querySelector('text');
      r.setAttribute('x', nx); r.setAttribute('width', Math.max(nw - 0.5, 0.1));
      t.setAttribute('x', nx + 3);
      t.textContent = nw > 40 ? n.dataset.label.slice(0, Math.floor(nw / 7)) : '';
    });
  }
  rects.forEach(function (g) {
    g.addEventListener('click', function () { zoom(g); });
    g.addEventListener('mouseover', function () { info.textContent = g.dataset.info; });
  });
  document.addEventListener('keydown', function (e) { if (e.key === 'Escape') zoom(rects[0]); });
  document.body.dataset.ready = 'yes';
})();
"""


def html_page(roots=None, title="pyjion profile"):
    """A self-contained HTML page with the flame graph of the tree."""
    roots = _roots(roots)
    blocks = _blocks(roots)
    whole = sum(r.total_time for r in roots) or 1.0
    depth = max([b[2] for b in blocks] or [0]) + 1
    height = depth * _ROW
    parts = []
    # A synthetic root spanning everything comes first: clicking it zooms out.
    everything = "all threads" if len(roots) != 1 else roots[0].label()
    parts.append(_block_svg(0.0, float(_WIDTH), -1, everything, "%s: %.3f s" % (everything, whole),
                            "#ccc", height))
    for left, width, level, node, _, _ in blocks:
        label = node.label()
        figures = "%s: %.1f%%, %.4f s total, %.4f s own, %d calls" % (
            node.label(strip_dirs=False), 100.0 * node.total_time / whole, node.total_time,
            node.own_time, node.calls)
        colour = "#bbb" if node.is_root else _colour(node.name[2])
        parts.append(_block_svg(left, width, level, label, figures, colour, height))
    hottest = max((b[3] for b in blocks if not b[3].is_root), key=lambda n: n.own_time, default=None)
    summary = ("hottest function: %s (%.1f%% own time)" % (hottest.label(), 100.0 * hottest.own_time / whole)
               if hottest is not None else "no profiled calls")
    return _PAGE % {
        "title": html.escape(title), "width": _WIDTH, "height": height + _ROW,
        "blocks": "\n".join(parts), "summary": html.escape(summary),
        "script": _SCRIPT % {"width": _WIDTH}}


def _block_svg(left, width, level, label, figures, colour, height):
    # Flame graphs grow upwards: the roots at the bottom.
    y = height - (level + 1) * _ROW
    text = html.escape(label[: int(width / 7)]) if width > 40 else ""
    return ('<g class="node" data-x="%.3f" data-w="%.3f" data-depth="%d" data-label="%s" data-info="%s">'
            '<title>%s</title><rect x="%.3f" y="%d" width="%.3f" height="%d" fill="%s" rx="2"/>'
            '<text x="%.3f" y="%d">%s</text></g>') % (
        left, width, level, html.escape(label), html.escape(figures), html.escape(figures),
        left, y, max(width - 0.5, 0.1), _ROW - 1, colour, left + 3, y + _ROW - 5, text)


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%(title)s</title>
<style>
body { font: 13px sans-serif; margin: 12px; }
svg { width: 100%%; height: auto; }
g.node text { font: 11px monospace; pointer-events: none; }
g.node:hover rect { stroke: #000; stroke-width: 0.5; }
#info { height: 1.4em; white-space: pre; font-family: monospace; }
</style></head>
<body>
<h1 style="font-size:16px">%(title)s</h1>
<p id="summary">%(summary)s</p>
<p id="info">Hover over a block for its figures; click to zoom in, Escape to zoom out.</p>
<svg id="flame" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %(width)d %(height)d">
%(blocks)s
</svg>
<script>%(script)s</script>
</body></html>
"""


def dump_html(path, roots=None, title="pyjion profile"):
    with open(path, "w") as f:
        f.write(html_page(roots, title))
    return path
