# Sourced by ./run and ./test: make .venv and install the project into it when
# pyproject.toml changed since the last install.
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

ensure_venv() {
    local extras="$1" python=python3.11
    command -v "$python" >/dev/null || python=python3
    if [ ! -x .venv/bin/python ]; then
        echo "creating .venv with $("$python" --version)"
        "$python" -m venv .venv
    fi
    local stamp=".venv/.installed-$(echo "$extras" | tr -c 'a-z' '_')"
    # setup.py builds the solver's native core from service/solver/_core.c: a change
    # there rebuilds it too.
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ setup.py -nt "$stamp" ] \
        || [ service/solver/_core.c -nt "$stamp" ]; then
        echo "installing the project into .venv ($extras)"
        .venv/bin/python -m pip install -q -e "$extras"
        touch "$stamp"
    fi
}
