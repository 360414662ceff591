"""ctest's entry to the Python suite: runs pytest on python/tests against the module built in the
build tree (PYTHONPATH=BUILD/python), or skips (exit 77) with one line naming what is missing.
Usage: run_tests.py BUILD_PYTHON_DIR [CAUSTIC_CLI]"""
import importlib.util
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
pkg = os.path.abspath(sys.argv[1])
missing = [m for m in ("numpy", "pytest") if importlib.util.find_spec(m) is None]
if missing:
    print(f"test_python: SKIPPED: {' and '.join(missing)} not installed for {sys.executable} "
          f"(make deps installs them: python3-numpy python3-pytest, or pip install numpy pytest)")
    sys.exit(77)
if not any(f.startswith("_caustic") for f in os.listdir(os.path.join(pkg, "caustic"))):
    print(f"test_python: FAIL: no extension module built under {pkg}/caustic")
    sys.exit(1)
env = dict(os.environ, PYTHONPATH=pkg + os.pathsep + os.environ.get("PYTHONPATH", ""))
if len(sys.argv) > 2:
    env["CAUSTIC_CLI"] = sys.argv[2]
rc = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", here], env=env, cwd=pkg)
sys.exit(rc)
