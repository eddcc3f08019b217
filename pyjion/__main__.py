"""python -m pyjion: run a script or a module with the JIT (and optionally the profiler).

    python -m pyjion [--threshold N] [--no-jit] [--jit-stats] [--profile] [--tree]
                     [-o out.prof|out.html|out.speedscope.json] [--sort KEY] script.py [args ...]
    python -m pyjion [options] -m module [args ...]

The program runs as it would under ``python script.py`` / ``python -m module``: the same
sys.argv, sys.path[0], ``__main__`` module, exit status and tracebacks (pyjion's own frames are
left out; with -m the two runpy frames stay, as python -m prints them; an uncaught
KeyboardInterrupt ends the process by SIGINT, as python does). The hook stays installed until
the interpreter exits, so atexit handlers run with the JIT too.
--profile prints the table ``python -m cProfile`` prints; --tree prints the call tree instead
(time per call path, hot paths first: pyjion.calltree). With -o the profile is written to a file
instead: a flame graph page for a name ending in .html, speedscope's format for one ending in
.json (pyjion.flamegraph), else the file pstats reads (as cProfile writes it). --jit-stats prints what the JIT did (code
objects compiled, left interpreted, loops entered from the interpreter, machine code alive) to
stderr when the interpreter exits."""
import argparse
import builtins
import io
import os
import pstats
import runpy
import sys
import types

import pyjion
import pyjion.calltree
import pyjion.flamegraph
import pyjion.profile

USAGE = ("python -m pyjion [--threshold N] [--no-jit] [--jit-stats] [--profile] [--tree] [-o FILE] [--sort KEY] "
         "(script.py | -m module) [args ...]")
# Options that take a value (as separate argument or --opt=value).
_VALUE_OPTIONS = ("--threshold", "-o", "--outfile", "-s", "--sort")


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m pyjion", usage=USAGE, allow_abbrev=False,
        description="Run a Python script or module with the pyjion JIT compiler.")
    parser.add_argument("--threshold", type=int, default=None, metavar="N",
                        help="calls before a function is compiled (default: pyjion.enable's)")
    parser.add_argument("--no-jit", dest="jit", action="store_false",
                        help="install the hook (counting, profiling) but never compile")
    parser.add_argument("--jit-stats", action="store_true",
                        help="print the JIT's statistics (pyjion.stats()['jit']) to stderr at exit")
    parser.add_argument("--profile", action="store_true",
                        help="profile every Python call; print a table like python -m cProfile")
    parser.add_argument("--tree", action="store_true",
                        help="with --profile (implied): print the call tree (time per call path)")
    parser.add_argument("-o", "--outfile", default=None, metavar="FILE",
                        help="with --profile (implied): write the profile to FILE: a flame graph "
                             "(FILE.html), speedscope's format (FILE.json), else pstats' format")
    parser.add_argument("-s", "--sort", default="cumulative",
                        choices=sorted(pstats.Stats.sort_arg_dict_default),
                        help="sort order of the printed profile (default: cumulative, as cProfile)")
    return parser


def _split_args(argv):
    """Splits argv into (pyjion's options, module or None, script or None, program args).
    Options end at the script, at -m MODULE, or at '--'."""
    options = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            i += 1
            break
        if arg == "-m" or (arg.startswith("-m") and not arg.startswith("--")):
            module = arg[2:] or (argv[i + 1] if i + 1 < len(argv) else None)
            rest = argv[i + 1:] if arg[2:] else argv[i + 2:]
            if not module:
                return options, None, None, []
            return options, module, None, rest
        if arg.startswith("-") and arg != "-":
            options.append(arg)
            if arg in _VALUE_OPTIONS and i + 1 < len(argv):
                options.append(argv[i + 1])
                i += 1
            i += 1
            continue
        break
    if i < len(argv):
        return options, None, argv[i], argv[i + 1:]
    return options, None, None, []


def parse_args(argv):
    parser = _parser()
    options, module, script, rest = _split_args(argv)
    opts = parser.parse_args(options)
    if module is None and script is None:
        parser.error("a script or -m module is required")
    if opts.threshold is not None and opts.threshold < 0:
        parser.error("--threshold must be >= 0")
    if opts.tree:
        opts.profile = True
    if opts.outfile is not None:
        opts.profile = True
        # The program may chdir: fix the output path now, as cProfile does.
        opts.outfile = os.path.abspath(opts.outfile)
    opts.module, opts.script, opts.args = module, script, rest
    return opts


# ---- the program ------------------------------------------------------------------------

def _fresh_main():
    """A new, empty __main__ module in sys.modules (the program's globals)."""
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    return main


def _is_runnable_archive(path):
    import zipfile
    return os.path.isdir(path) or zipfile.is_zipfile(path)


def _read_code(path):
    """The code object of a script file: source, or a .pyc as python runs one."""
    import importlib.util
    with io.open_code(path) as f:
        data = f.read()
    if data[:len(importlib.util.MAGIC_NUMBER)] == importlib.util.MAGIC_NUMBER:
        import marshal
        return marshal.loads(data[16:])
    return compile(data, path, "exec", dont_inherit=True)


def _prepare(opts):
    """Sets sys.argv, sys.path and __main__ as python would; returns what to run: ("code", code
    object, globals) or ("module", name, alter_argv) for runpy._run_module_as_main. main() runs it
    itself: a helper function called after enable() would show in the profile."""
    if opts.module is not None:
        # python -m: sys.path[0] is already the current directory (we run as python -m too);
        # runpy sets argv[0] to the module's file and runs it in __main__'s globals.
        sys.argv[:] = [opts.module] + opts.args
        _fresh_main()
        return "module", opts.module, True

    script = opts.script
    sys.argv[:] = [script] + opts.args
    path = os.path.abspath(script)
    if os.path.exists(path) and _is_runnable_archive(path):
        # python dir_or_zip: its __main__ module, found through sys.path[0].
        if not sys.flags.safe_path:
            _replace_path0(path)
        _fresh_main()
        return "module", "__main__", False

    try:
        code = _read_code(path)
    except OSError as exc:
        sys.stderr.write("%s: can't open file %r: [Errno %d] %s\n"
                         % (sys.orig_argv[0] if sys.orig_argv else sys.executable, path,
                            exc.errno, exc.strerror))
        sys.stderr.flush()
        raise SystemExit(2)
    except (SyntaxError, ValueError) as exc:
        # Printed as python prints a script's syntax error: no traceback of ours.
        _report(exc.with_traceback(None))
    if not sys.flags.safe_path:
        _replace_path0(os.path.dirname(os.path.realpath(path)))
    main = _fresh_main()
    main.__file__ = path
    main.__cached__ = None
    main.__package__ = None
    main.__spec__ = None
    from importlib.machinery import SourceFileLoader
    main.__loader__ = SourceFileLoader("__main__", path)
    return "code", code, main.__dict__


def _replace_path0(directory):
    """sys.path[0] becomes the script's directory (under python -m pyjion it is the current
    directory, which python script.py would not put there)."""
    if sys.path and sys.path[0] in ("", os.getcwd()):
        sys.path[0] = directory
    else:
        sys.path.insert(0, directory)


# ---- uncaught exceptions ----------------------------------------------------------------

def _strip_own_frames(tb):
    """The traceback from the program's first frame on: drops this module's frames."""
    own = _strip_own_frames.__code__.co_filename
    while tb is not None and tb.tb_frame.f_code.co_filename == own:
        tb = tb.tb_next
    return tb


def _print_exception(exc):
    """Prints `exc` as python's PyErr_Print does: through sys.excepthook."""
    tb = exc.__traceback__
    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb
    hook = getattr(sys, "excepthook", None)
    if hook is None:
        sys.stderr.write("sys.excepthook is missing\n")
        sys.__excepthook__(type(exc), exc, tb)
        return
    try:
        hook(type(exc), exc, tb)
    except BaseException as err:
        try:
            sys.stderr.flush()
        except Exception:
            pass
        sys.stderr.write("Error in sys.excepthook:\n")
        sys.__excepthook__(type(err), err, err.__traceback__)
        sys.stderr.write("\nOriginal exception was:\n")
        sys.__excepthook__(type(exc), exc, tb)


def _report(exc):
    """Reports an uncaught exception of the program and ends this run the way python would:
    status 1, or death by SIGINT for KeyboardInterrupt (python's own exit path does that when
    the exception leaves us; it finds a silent excepthook, since the report is printed)."""
    exc.__traceback__ = _strip_own_frames(exc.__traceback__)
    _print_exception(exc)
    previous = sys.excepthook

    def already_reported(*args):
        sys.excepthook = previous

    sys.excepthook = already_reported
    raise exc.with_traceback(exc.__traceback__)


# ---- profile output ---------------------------------------------------------------------

def _show_profile(opts, functions, tree_data):
    out = opts.outfile
    if out is not None and out.endswith((".html", ".htm")):
        pyjion.flamegraph.dump_html(out, pyjion.calltree.call_tree(tree_data), title=_program_name(opts))
    elif out is not None and out.endswith(".json"):
        pyjion.flamegraph.dump_speedscope(out, pyjion.calltree.call_tree(tree_data), name=_program_name(opts))
    elif out is not None:
        pyjion.profile.dump_stats(out, functions)
    elif opts.tree:
        pyjion.calltree.print_tree(pyjion.calltree.call_tree(tree_data))
    else:
        pyjion.profile.print_stats(sort=opts.sort, stats=functions)


def _program_name(opts):
    return "pyjion profile of %s" % (opts.script if opts.script is not None else "-m " + opts.module)


# ---- JIT statistics -----------------------------------------------------------------------

def format_jit_stats(jit):
    """One paragraph for a person, from pyjion.stats()["jit"]."""
    lines = [
        "pyjion: %d code objects compiled (%d bytecode instructions, %.1f KiB of machine code, "
        "%.3f s compiling), %d left to the interpreter by the compiler"
        % (jit["compiled"], jit["instructions"], jit["code_bytes"] / 1024, jit["compile_time_s"],
           jit["failed"]),
        "pyjion: %d code objects ran only interpreted (not warm enough to compile)"
        % jit["interpreted"],
        "pyjion: %d loops moved from the interpreter into machine code (%d sampler ticks charged)"
        % (jit["osr_entries"], jit["samples"]),
    ]
    if "code_bytes_alive" in jit:
        lines.append("pyjion: machine code alive now: %.1f KiB" % (jit["code_bytes_alive"] / 1024))
    for reason, count in sorted(jit["failed_reasons"].items(), key=lambda kv: -kv[1])[:5]:
        lines.append("pyjion:   %d not compiled: %s" % (count, reason))
    return "\n".join(lines)


def _print_jit_stats_at_exit():
    import atexit

    def report():
        try:
            sys.stderr.write(format_jit_stats(pyjion.stats()["jit"]) + "\n")
            sys.stderr.flush()
        except Exception:
            pass

    atexit.register(report)     # registered first, so it runs after the program's own handlers


# ---- main -------------------------------------------------------------------------------

def main(argv=None):
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    kind, what, arg = _prepare(opts)
    if opts.jit_stats:
        _print_jit_stats_at_exit()
    if opts.profile:
        pyjion.reset_stats()
    try:
        pyjion.enable(threshold=opts.threshold, profile=opts.profile, jit=opts.jit)
    except (RuntimeError, ImportError, ValueError) as exc:
        sys.exit("python -m pyjion: cannot enable pyjion: %s" % exc)
    try:
        try:
            if kind == "code":
                exec(what, arg)
            else:
                runpy._run_module_as_main(what, alter_argv=arg)
        finally:
            if opts.profile:
                # Snapshot first: a call is counted when it returns, so neither stats() (still
                # running) nor the config() call that stops the profiler shows in the profile.
                # The hook stays installed: the JIT keeps running the program's exit handlers.
                # (the tree first: _eval.call_tree runs no Python code of its own)
                tree_data = pyjion._eval.call_tree()
                functions = pyjion.stats()["functions"]
                pyjion.config(profile=False)
                _show_profile(opts, functions, tree_data)
    except SystemExit:
        raise               # python prints its message (if any) and exits with its code
    except BaseException as exc:
        _report(exc)


if __name__ == "__main__":
    main()
