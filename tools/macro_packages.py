#!/usr/bin/env python3
"""Installs the packages of the macro benchmark programs (bench/macro/) into a
scratch folder: build/macro/site, pinned by bench/macro/requirements.txt,
with `pip install --no-deps --target` (every dependency is pinned in that
file too, so nothing unpinned comes along). Skipped when the folder already
holds exactly that requirements file's packages.

    python tools/macro_packages.py            # install if needed; prints the folder
    python tools/macro_packages.py --force    # install again

The programs see the folder through PYTHONPATH (bench/macro_suite.py sets
it); nothing is installed into the venv or vendored into the repository."""
import argparse
import hashlib
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REQUIREMENTS = os.path.join(REPO, "bench", "macro", "requirements.txt")
SITE = os.path.join(REPO, "build", "macro", "site")
STAMP = os.path.join(SITE, ".requirements-sha256")


def requirements_digest():
    with open(REQUIREMENTS, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


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
