"""setup.py -- records, at install time, the repository the package is
installed from (threadmap/_install.py), so that an installed copy still
finds that repository's build/libthreadmap.so; everything else is in
pyproject.toml."""
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPy(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "threadmap", "_install.py")
        with open(target, "w") as f:
            f.write('"""Written by setup.py: the repository this copy was installed from."""\n')
            f.write(f"REPO_ROOT = {os.path.dirname(HERE)!r}\n")


setup(cmdclass={"build_py": BuildPy})
