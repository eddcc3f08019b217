#!/usr/bin/env python3
"""Installs the packages of the macro benchmark programs (bench/macro/) into a
scratch folder, one per Python version (packages with C extensions, as
MarkupSafe's, are built per version): build/macro/site for CPython 3.11,
build/macro/site-3.13 for 3.13 (site-X.Y for any other), pinned by
bench/macro/requirements.txt, with `pip install --no-deps --target` (every
dependency is pinned in that file too, so nothing unpinned comes along).
A package whose one pin cannot serve every version gets one line per
version, told apart by a pip environment marker (`; python_version >= "3.13"`).
Skipped when the folder already holds exactly that requirements file's
packages for this interpreter.

    python tools/macro_packages.py            # install if needed; prints the folder
    python tools/macro_packages.py --force    # install again

Run it with the interpreter the programs run with (bench/macro_suite.py
installs with its own, sys.executable).
The programs see the folder through PYTHONPATH (bench/macro_suite.py sets
it); nothing is installed into the venv or vendored into the repository."""
import argparse
import hashlib
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REQUIREMENTS = os.path.join(REPO, "bench", "macro", "requirements.txt")


def site_dir(version=sys.version_info[:2]):
    """The folder of one Python version's packages: 3.11 keeps the folder it
    had before there were others."""
    name = "site" if tuple(version) == (3, 11) else "site-%d.%d" % tuple(version)
    return os.path.join(REPO, "build", "macro", name)


SITE = site_dir()
STAMP = os.path.join(SITE, ".requirements-sha256")


def requirements_digest():
    with open(REQUIREMENTS, "rb") as f:
        data = f.read()
    # the interpreter's version too: a folder filled by another version is not this one's
    return hashlib.sha256(data + sys.version.encode()).hexdigest()


def installed():
    try:
        with open(STAMP) as f:
            return f.read().strip() == requirements_digest()
    except OSError:
        return False


def install(force=False, log=print):
    """Installs (or re-installs, when the pins changed) and returns the folder."""
    if installed() and not force:
        return SITE
    log("macro_packages: installing %s into %s" % (os.path.relpath(REQUIREMENTS, REPO), SITE))
    if os.path.isdir(SITE):
        subprocess.run(["rm", "-rf", SITE], check=True)
    os.makedirs(SITE)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "--no-deps", "--no-compile", "--target", SITE, "-r", REQUIREMENTS], check=True)
    # Byte-compile once here, so no measured run pays for writing .pyc files.
    subprocess.run([sys.executable, "-m", "compileall", "-q", SITE], check=False,
                   stdout=subprocess.DEVNULL)
    with open(STAMP, "w") as f:
        f.write(requirements_digest() + "\n")
    return SITE


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--force", action="store_true", help="install even if the pins are there")
    args = ap.parse_args()
    print(install(force=args.force))


if __name__ == "__main__":
    main()
