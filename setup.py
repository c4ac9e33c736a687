"""The solver's native core, a C extension built with the package (everything else is
in pyproject.toml). ``optional``: where no compiler is found the build goes on without
it, and the solver runs in pure Python (the service says so once at start)."""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("service.solver._core", ["service/solver/_core.c"], optional=True,
              extra_compile_args=["-O2"]),
])
