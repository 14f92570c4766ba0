"""The docker-compose `model` profile works on first `up`: Ollama has a health
check, an init service pulls the chat and embedding models once Ollama is
healthy, speakermemd starts only after that init service succeeded, and every
model variable is wired to a key the server reads (checked against
`speakermemd --help-config`). Uses Debian's docker-compose (v1) to resolve the
file, as compose v2 would.

Environment: SPEAKERMEMD (the server binary), COMPOSE_FILE (deploy/docker-compose.yml).
"""
import os
import re
import subprocess
import unittest
import urllib.parse

import yaml

COMPOSE = os.environ["COMPOSE_FILE"]
SPEAKERMEMD = os.environ["SPEAKERMEMD"]


def resolved(extra_env=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OLLAMA_")}
    env.update(extra_env or {})
    out = subprocess.run(["docker-compose", "-f", COMPOSE, "--profile", "model", "config"],
                         env=env, check=True, capture_output=True, text=True).stdout
    return yaml.safe_load(out)["services"]


def server_variables():
    """The SPEAKERMEM_* variables the server reads, and its per-stage pattern."""
    out = subprocess.run([SPEAKERMEMD, "--help-config"], check=True, capture_output=True,
                         text=True).stdout
    names = set(re.findall(r"`(SPEAKERMEM_[A-Z0-9_]+)`", out))
    stages = re.search(r"stages: ([a-z, ]+)\.", out).group(1).replace(" ", "").split(",")
    model_keys = {n[len("SPEAKERMEM_MODEL_"):] for n in names if n.startswith("SPEAKERMEM_MODEL_")}
    return names, stages, model_keys


class ModelProfileTest(unittest.TestCase):
    def setUp(self):
        self.services = resolved()

    def test_ollama_is_health_checked_and_recent(self):
        ollama = self.services["ollama"]
        self.assertIn("healthcheck", ollama)
        self.assertEqual(ollama["healthcheck"]["test"][:2], ["CMD", "ollama"])
        # JSON-Schema structured outputs arrived in Ollama 0.5.
        version = ollama["image"].rsplit(":", 1)[1]
        self.assertGreaterEqual(tuple(int(x) for x in version.split(".")[:2]), (0, 5), version)

    def test_init_service_pulls_both_models_after_ollama_is_healthy(self):
        pull = self.services["ollama-pull"]
        self.assertEqual(pull["depends_on"]["ollama"]["condition"], "service_healthy")
        self.assertEqual(pull["image"], self.services["ollama"]["image"])
        self.assertEqual(str(pull.get("restart", "no")), "no")
        script = " ".join(pull["entrypoint"] + pull["command"])
        self.assertIn('ollama pull "$$OLLAMA_MODEL"', script)
        self.assertIn('ollama pull "$$OLLAMA_EMBED_MODEL"', script)
        self.assertEqual(urllib.parse.urlparse(pull["environment"]["OLLAMA_HOST"]).hostname,
                         "ollama")

    def test_server_starts_after_the_models_are_present(self):
        server = self.services["speakermemd-with-model"]
        self.assertEqual(server["depends_on"]["ollama-pull"]["condition"],
                         "service_completed_successfully")
        self.assertEqual(server["depends_on"]["ollama"]["condition"], "service_healthy")

    def test_model_names_reach_both_the_pull_and_the_server(self):
        for env in ({}, {"OLLAMA_MODEL": "tiny-chat:1b", "OLLAMA_EMBED_MODEL": "tiny-embed:v2"}):
            services = resolved(env)
            pull = services["ollama-pull"]["environment"]
            server = services["speakermemd-with-model"]["environment"]
            self.assertEqual(server["SPEAKERMEM_MODEL_MODEL"], pull["OLLAMA_MODEL"])
            self.assertEqual(server["SPEAKERMEM_MODEL_EMBED_MODEL"], pull["OLLAMA_EMBED_MODEL"])
            if env:
                self.assertEqual(pull["OLLAMA_MODEL"], "tiny-chat:1b")
                self.assertEqual(pull["OLLAMA_EMBED_MODEL"], "tiny-embed:v2")

    def test_base_url_points_at_the_ollama_service(self):
        server = self.services["speakermemd-with-model"]["environment"]
        url = urllib.parse.urlparse(server["SPEAKERMEM_MODEL_BASE_URL"])
        self.assertIn(url.hostname, self.services)
        self.assertEqual(url.hostname, "ollama")
        ports = [str(p.get("target", p) if isinstance(p, dict) else p).split(":")[-1]
                 for p in self.services["ollama"]["ports"]]
        self.assertIn(str(url.port), ports)
        self.assertEqual(url.path, "/v1")
        self.assertEqual(server["SPEAKERMEM_MODEL_PROVIDER"], "openai")

    def test_every_server_variable_is_one_the_server_reads(self):
        names, stages, model_keys = server_variables()
        self.assertIn("SPEAKERMEM_MODEL_PROVIDER", names)
        self.assertIn("embed", stages)
        for name, service in self.services.items():
            for var in (service.get("environment") or {}):
                if not var.startswith("SPEAKERMEM_"):
                    continue
                per_stage = any(var == f"SPEAKERMEM_MODEL_{s.upper()}_{k}"
                                for s in stages for k in model_keys)
                self.assertTrue(var in names or per_stage, f"{name}: {var} is read by nothing")


if __name__ == "__main__":
    unittest.main()
