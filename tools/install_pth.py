"""Makes sure pyjion-startup.pth sits in this environment's site-packages.

A regular `pip install` ships it inside the wheel (setup.py's build_py); an
editable install does not run that step, so `make setup` calls this."""
import os
import shutil
import sysconfig

here = os.path.dirname(os.path.abspath(__file__))
source = os.path.join(here, "..", "pyjion", "pyjion-startup.pth")
target = os.path.join(sysconfig.get_paths()["purelib"], "pyjion-startup.pth")
if not os.path.exists(target) or open(target).read() != open(source).read():
    shutil.copyfile(source, target)
