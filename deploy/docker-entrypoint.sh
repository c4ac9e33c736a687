#!/bin/sh
# Entrypoint of the solitaire-service image.
#
# Outside a container the service may start its embedded store and generate its
# own token secret under its data dir; in a container both are wrong (the data
# dies with the container, and each instance would sign tokens with a secret of
# its own), so this refuses to start the service without REDIS_URL and a token
# secret. Any other command (a shell, say) runs unchecked.
#
# SOLITAIRE_TOKEN_SECRET_FILE=<path> reads the secret from a file (a compose or
# Docker secret under /run/secrets/); SOLITAIRE_TOKEN_SECRET wins if both are set.
# The daily challenges' secret likewise (SOLITAIRE_DAILY_SECRET[_FILE]): each
# instance generating its own would deal each instance its own daily deals.
set -eu

die() {
    echo "docker-entrypoint: $*" >&2
    exit 78  # EX_CONFIG
}

is_service=no
case "${1:-}" in
    solitaire-service) is_service=yes ;;
    python | python3 | python3.*)
        if [ "${2:-}" = "-m" ] && [ "${3:-}" = "service" ]; then is_service=yes; fi ;;
esac

if [ "$is_service" = yes ]; then
    if [ -z "${SOLITAIRE_TOKEN_SECRET:-}" ] && [ -n "${SOLITAIRE_TOKEN_SECRET_FILE:-}" ]; then
        [ -r "$SOLITAIRE_TOKEN_SECRET_FILE" ] \
            || die "SOLITAIRE_TOKEN_SECRET_FILE=$SOLITAIRE_TOKEN_SECRET_FILE cannot be read"
        # $(...) drops the trailing newline that `print()` or `echo` left in the file.
        SOLITAIRE_TOKEN_SECRET="$(cat "$SOLITAIRE_TOKEN_SECRET_FILE")"
        export SOLITAIRE_TOKEN_SECRET
    fi
    unset SOLITAIRE_TOKEN_SECRET_FILE
    if [ -z "${SOLITAIRE_DAILY_SECRET:-}" ] && [ -n "${SOLITAIRE_DAILY_SECRET_FILE:-}" ]; then
        [ -r "$SOLITAIRE_DAILY_SECRET_FILE" ] \
            || die "SOLITAIRE_DAILY_SECRET_FILE=$SOLITAIRE_DAILY_SECRET_FILE cannot be read"
        SOLITAIRE_DAILY_SECRET="$(cat "$SOLITAIRE_DAILY_SECRET_FILE")"
        export SOLITAIRE_DAILY_SECRET
    fi
    unset SOLITAIRE_DAILY_SECRET_FILE

    [ -n "${REDIS_URL:-}" ] \
        || die "REDIS_URL is required in a container (redis://host:6379/0, or a comma-separated list of cluster nodes)"
    [ -n "${SOLITAIRE_TOKEN_SECRET:-}" ] \
        || die "SOLITAIRE_TOKEN_SECRET (or SOLITAIRE_TOKEN_SECRET_FILE) is required: the same secret on every instance"
    case "$SOLITAIRE_TOKEN_SECRET" in
        *REPLACE_ME*) die "SOLITAIRE_TOKEN_SECRET is still the placeholder of deploy/k8s/token-secret.example.yaml" ;;
    esac
    [ "${#SOLITAIRE_TOKEN_SECRET}" -ge 32 ] \
        || die "SOLITAIRE_TOKEN_SECRET is shorter than 32 characters; generate one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
    [ -n "${SOLITAIRE_DAILY_SECRET:-}" ] \
        || die "SOLITAIRE_DAILY_SECRET (or SOLITAIRE_DAILY_SECRET_FILE) is required: the same secret on every instance, apart from the token secret"
    case "$SOLITAIRE_DAILY_SECRET" in
        *REPLACE_ME*) die "SOLITAIRE_DAILY_SECRET is still the placeholder of deploy/k8s/token-secret.example.yaml" ;;
    esac
    [ "${#SOLITAIRE_DAILY_SECRET}" -ge 32 ] \
        || die "SOLITAIRE_DAILY_SECRET is shorter than 32 characters; generate one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
fi

exec "$@"
