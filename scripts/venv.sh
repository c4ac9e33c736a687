# Sourced by ./run and ./test: make .venv and install into it, from a lock file, the exact
# versions (hashes checked) the project was tested with, then the project itself. Again
# only when the lock file or pyproject.toml changed since the last install.
#
#   ensure_venv requirements/service.txt   # ./run
#   ensure_venv requirements/test.txt      # ./test
#
# The locks are written by scripts/lock (see README, "Dependencies").
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

ensure_venv() {
    local lock="$1" python=python3.11
    command -v "$python" >/dev/null || python=python3
    if [ ! -x .venv/bin/python ]; then
        echo "creating .venv with $("$python" --version)"
        "$python" -m venv .venv
    fi
    local stamp=".venv/.installed-$(basename "$lock" .txt)"
    # setup.py builds the solver's native core from service/solver/_core.c: a change
    # there rebuilds it too.
    if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ] \
        || [ setup.py -nt "$stamp" ] || [ service/solver/_core.c -nt "$stamp" ]; then
        echo "installing $lock into .venv (exact versions, hashes checked)"
        .venv/bin/python -m pip install -q --require-hashes --no-deps -r "$lock"
        # The build backend came from the lock: nothing unpinned is fetched to build.
        .venv/bin/python -m pip install -q --no-deps --no-build-isolation -e .
        touch "$stamp"
    fi
}
