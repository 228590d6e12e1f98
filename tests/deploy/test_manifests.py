"""docker-compose.yml, the Dockerfiles and the Kubernetes/KEDA manifests, checked against the code.

No Docker engine or cluster runs here, so these tests parse what a user deploys and check every
name against the code: categories and queue names, CLI commands and options, settings' env names.
They fail when someone renames a queue, a command or a setting without updating the manifests.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer.main
import yaml

from tests.conftest import ROOT
from toolfleet.cli import app
from toolfleet.names import CATEGORIES
from toolfleet.settings import Settings

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
K8S = {p.name: [d for d in yaml.safe_load_all(p.read_text()) if d]
       for p in sorted((ROOT / "deploy/k8s").glob("*.yaml"))}
THIRD_PARTY_ENV = {"POSTGRES_USER", "POSTGRES_PASSWORD", "POSTGRES_DB", "FLOWER_BASIC_AUTH", "PIP_NO_CACHE_DIR",
                   "PYTHONUNBUFFERED", "HF_HUB_OFFLINE"}


def _settings_env_names() -> set[str]:
    names = {"DATABASE_URL", "BROKER_URL"}
    for field in Settings.model_fields:
        names.add(f"TOOLFLEET_{field.upper()}")
    return names


def check_command(argv: list[str]) -> None:
    """Parse argv with the real CLI (toolfleet) or Celery's (celery ... flower); unknown options fail."""
    if argv[0] == "toolfleet":
        commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
        assert argv[1] in commands, f"`toolfleet {argv[1]}` is not a command"
        commands[argv[1]].make_context(argv[1], list(argv[2:]))  # raises on an unknown option or bad value
    elif argv[0] == "celery":
        assert "flower" in argv and "--broker" in argv
    else:
        raise AssertionError(f"unexpected command {argv}")


def _workers_in_compose() -> dict[str, dict[str, Any]]:
    return {k: v for k, v in COMPOSE["services"].items() if k.startswith("worker-")}


def test_compose_has_every_service_a_user_needs() -> None:
    services = set(COMPOSE["services"])
    assert {"postgres", "redis", "migrate", "api", "flower"} <= services
    assert {f"worker-{c}" for c in CATEGORIES} == set(_workers_in_compose())
    assert COMPOSE["services"]["postgres"]["image"].startswith("pgvector/pgvector:")


def test_compose_worker_commands_are_real_and_match_their_category() -> None:
    for name, svc in _workers_in_compose().items():
        argv = svc["command"]
        check_command(argv)
        assert argv[1] == "worker" and argv[argv.index("--category") + 1] == name.removeprefix("worker-")
        assert svc["stop_grace_period"]
        assert svc["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    for svc in ("api", "migrate"):
        check_command(COMPOSE["services"][svc]["command"])
    check_command(COMPOSE["services"]["flower"]["command"])


def test_compose_redis_keeps_queued_work_and_healthchecks_gate_startup() -> None:
    redis = " ".join(COMPOSE["services"]["redis"]["command"])
    assert "--appendonly yes" in redis and "--maxmemory-policy noeviction" in redis
    for svc in ("postgres", "redis", "api"):
        assert "healthcheck" in COMPOSE["services"][svc], svc
    assert COMPOSE["services"]["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert COMPOSE["services"]["api"]["depends_on"]["redis"]["condition"] == "service_healthy"


def test_compose_env_names_exist_in_settings_and_required_ones_are_enforced() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    known = _settings_env_names() | THIRD_PARTY_ENV
    for svc in COMPOSE["services"].values():
        for name in (svc.get("environment") or {}):
            assert name in known, f"compose sets {name}, which no setting reads"
    assert "${POSTGRES_PASSWORD:?" in text and "${FLOWER_BASIC_AUTH:?" in text


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "Dockerfile.browser"])
def test_dockerfiles_run_real_commands(dockerfile: str) -> None:
    text = (ROOT / "deploy" / dockerfile).read_text()
    cmd = re.search(r'^CMD (\[.*\])', text, re.M)
    assert cmd, "no CMD"
    check_command(yaml.safe_load(cmd.group(1)))
    for name in re.findall(r"\b(TOOLFLEET_[A-Z_]+)=", text):
        assert name in _settings_env_names(), f"{dockerfile} sets {name}, which no setting reads"
    if dockerfile == "Dockerfile":
        assert "torch==2.13.0" in text and "/whl/cpu" in text
        for package in ("api", "workers", "registry", "executables", "toolfleet"):
            assert f"COPY {package} " in text
    else:
        assert "chromium" in text


def _k8s_docs(kind: str) -> list[dict[str, Any]]:
    return [d for docs in K8S.values() for d in docs if d["kind"] == kind]


def test_k8s_one_worker_deployment_per_category_with_graceful_shutdown() -> None:
    workers = [d for d in _k8s_docs("Deployment") if d["metadata"]["labels"].get("component") == "worker"]
    by_category = {d["metadata"]["labels"]["category"]: d for d in workers}
    assert set(by_category) == set(CATEGORIES)
    for category, d in by_category.items():
        pod = d["spec"]["template"]["spec"]
        assert pod["terminationGracePeriodSeconds"] >= 60
        argv = pod["containers"][0]["command"]
        check_command(argv)
        assert argv[argv.index("--category") + 1] == category


def test_keda_queue_names_equal_the_celery_queues() -> None:
    for file, key in (("keda-redis.yaml", "listName"), ("keda-rabbitmq.yaml", "queueName")):
        scaled = [d for d in K8S[file] if d["kind"] == "ScaledObject"]
        targets = {}
        for d in scaled:
            trigger = d["spec"]["triggers"][0]["metadata"]
            targets[trigger[key]] = d["spec"]["scaleTargetRef"]["name"]
        assert set(targets) == set(CATEGORIES), file
        deployments = {d["metadata"]["name"]: d["metadata"]["labels"].get("category") for d in _k8s_docs("Deployment")}
        for queue, deployment in targets.items():
            assert deployments[deployment] == queue, f"{file}: queue {queue} scales {deployment}"


def test_k8s_commands_and_env_names_are_real() -> None:
    known = _settings_env_names() | THIRD_PARTY_ENV
    for d in _k8s_docs("Deployment"):
        spec = d["spec"]["template"]["spec"]
        for c in spec.get("initContainers", []) + spec["containers"]:
            check_command(c["command"])
            for env in c.get("env", []):
                assert env["name"] in known, env["name"]
    for cm in _k8s_docs("ConfigMap"):
        for name in cm["data"]:
            assert name in known, name


def test_readme_says_how_to_scale() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "docker compose up --scale worker-browser=4" in readme or "--scale worker-browser=4" in readme
    assert "kubectl apply -f deploy/k8s" in readme


