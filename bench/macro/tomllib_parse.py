"""TOML parsing with the standard library's tomllib (pure Python): a
generated configuration file with tables, arrays of tables, inline tables,
strings with escapes, dates and numbers. Result: key count and checksum."""
import tomllib
import zlib


def make_document(n):
    out = ['title = "generated \\"config\\""\nversion = 3\n\n[owner]\nname = "Ann"\n'
           "dob = 1979-05-27T07:32:00-08:00\n\n"]
    for i in range(n):
        out.append("[[servers]]\nname = \"srv-%d\"\nip = \"10.0.%d.%d\"\nports = [ %d, %d, %d ]\n"
                   % (i, i % 256, i * 7 % 256, 8000 + i, 9000 + i, 10000 + i))
        out.append("enabled = %s\nweight = %d.%d\nlimits = { cpu = %d, mem = \"%dMiB\" }\n"
                   % ("true" if i % 3 else "false", i, i % 10, i % 8 + 1, 256 * (i % 4 + 1)))
        out.append("tags = [\"a%d\", 'b%d', \"\"\"c\n%d\"\"\"]\n[servers.meta]\nnote = 'x%d'\n\n"
                   % (i % 5, i % 7, i, i))
    return "".join(out)


def count_keys(value):
    if isinstance(value, dict):
        return len(value) + sum(count_keys(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_keys(v) for v in value)
    return 0


def run():
    text = make_document(1600)
    data = tomllib.loads(text)
    return count_keys(data), zlib.crc32(repr(data).encode())


if __name__ == "__main__":
    print(run())
