"""Regular expressions compiled by the standard library's parser and
compiler (re._parser and re._compiler are pure Python), with the cache
purged so that every pattern is compiled again, then matched. Result: the
matches found."""
import re

PATTERNS = [
    r"(?P<year>\d{4})-(?P<month>\d\d)-(?P<day>\d\d)(?:T(\d\d):(\d\d)(?::(\d\d))?)?",
    r"[A-Za-z_][A-Za-z0-9_]*\s*=\s*(?:'[^']*'|\"[^\"]*\"|\d+(?:\.\d*)?)",
    r"(?i)\b(?:https?|ftp)://[^\s/$.?#].[^\s]*\b",
    r"^(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*)@(?:[a-z0-9-]+\.)+[a-z]{2,}$",
    r"(\w+)\s+\1",
    r"(?x) \( \s* (?P<args> [^()]* ) \s* \)  # a call's arguments",
    r"(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)",
    r"(?s)<(?P<tag>[a-z][a-z0-9]*)\b[^>]*>(.*?)</(?P=tag)>",
    r"[\u0400-\u04FF]+|[\u4e00-\u9fff]+|[^\W\d_]+",
    r"(?<=\$)\d+(?:,\d{3})*(?:\.\d\d)?(?!\d)",
    r"(a|b|c|d|e|f|g|h)*?(?:xyz|abc|def){2,5}[^a-f]+?",
    r"\b(?:if|elif|else|for|while|try|except|finally|with|def|class|return|yield)\b",
]

TEXT = ("On 2026-12-06T13:45:10 user x = 'value' and y=42.5 visited https://example.com/path?q=1 "
        "mail a.b@example.org from 192.168.1.254; the the word word <b>bold</b> <i>it</i> "
        "Привет 你好 cost $1,234.56 and $7 ok abcxyzdefqq if x: return y ") * 20


def run():
    found = []
    for round_ in range(60):
        re.purge()
        for i, p in enumerate(PATTERNS):
            flags = re.MULTILINE if round_ % 2 else 0
            rx = re.compile(p + ("|(?:z%d)" % round_), flags)
            if round_ % 10 == 0:
                found.append(len(rx.findall(TEXT)))
                found.append(rx.sub("<%d>" % i, TEXT[:200]).count("<"))
    return found


if __name__ == "__main__":
    print(run())
