"""The wheel puts one import package in site-packages, `memory`, with the command line as `memory.cli`."""

import subprocess
import sys
import zipfile

from surfaces import ROOT


def test_the_wheel_installs_only_the_memory_package(tmp_path):
    # the build backend comes with the test extras, so no isolated build environment is needed
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(ROOT),
                            "-w", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    wheel = next(tmp_path.glob("datalog_memory-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"memory"}
    for module in ("memory/cli/__init__.py", "memory/cli/__main__.py", "memory/cli/main.py",
                   "memory/cli/render.py", "memory/cli/bulk.py", "memory/_schema/schema.sql",
                   "memory/explorer/explorer.css"):
        assert module in names
    assert not any("__pycache__" in name for name in names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "datalog-memory = memory.cli.main:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    # installed (unpacked onto the path, away from this checkout), `python -m memory.cli` is the command line
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    installed = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "memory.cli", "--version"], capture_output=True, text=True,
                          cwd=tmp_path, env=installed, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("datalog-memory "), done.stderr
    where = subprocess.run([sys.executable, "-c", "import memory.cli.main as m; print(m.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env=installed, timeout=120)
    assert where.stdout.strip() == str(site / "memory" / "cli" / "main.py")
