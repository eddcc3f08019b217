"""The standard library's logging: loggers in a hierarchy, filters, several
handlers with formatters ({}-style, %-style, with dates from a fixed clock),
exceptions with tracebacks and records that are dropped by level. Result:
length and checksum of what was written."""
import io
import logging
import zlib


class FixedClock(logging.Formatter):
    def formatTime(self, record, datefmt=None):
        return "2026-01-01 00:00:%02d" % (record.lineno % 60)


class EvenOnly(logging.Filter):
    def filter(self, record):
        return record.args and record.args[0] % 2 == 0 if isinstance(record.args, tuple) else True


def run():
    out1, out2 = io.StringIO(), io.StringIO()
    root = logging.getLogger("macro")
    root.setLevel(logging.DEBUG)
    root.propagate = False
    h1 = logging.StreamHandler(out1)
    h1.setFormatter(FixedClock("%(asctime)s %(name)s %(levelname)-8s %(message)s"))
    h2 = logging.StreamHandler(out2)
    h2.setLevel(logging.WARNING)
    h2.setFormatter(logging.Formatter("{levelname}:{name}:{funcName}:{message}", style="{"))
    h2.addFilter(EvenOnly())
    root.addHandler(h1)
    root.addHandler(h2)
    children = [logging.getLogger("macro.part%d.sub%d" % (i % 4, i % 3)) for i in range(12)]
    try:
        for i in range(12000):
            log = children[i % 12]
            if i % 5 == 0:
                log.debug("debug %d of %s", i, "x")
            elif i % 5 == 1:
                log.info("info %d %r", i, {"k": i})
            elif i % 5 == 2:
                log.warning("warning %d", i)
            elif i % 97 == 0:
                try:
                    1 / 0
                except ZeroDivisionError:
                    log.exception("failed %d", i)
            else:
                log.error("error %d %s", i, "y" * (i % 5))
            if i == 6000:
                root.setLevel(logging.INFO)
    finally:
        root.removeHandler(h1)
        root.removeHandler(h2)
        root.setLevel(logging.DEBUG)
    text = out1.getvalue().replace(__file__, "FILE") + out2.getvalue()
    return len(text), zlib.crc32(text.encode())


if __name__ == "__main__":
    print(run())
