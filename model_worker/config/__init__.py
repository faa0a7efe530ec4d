"""Engine settings from the environment: which page backend, which checkpoint, which device."""

from __future__ import annotations

import functools
import inspect
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from model_worker.config.environment import env_number
from model_worker.contract.pages import LIBRARY_ONLY, BackendCapabilities
from model_worker.sampler.config import DECODINGS

REPO_ROOT = Path(__file__).resolve().parents[2]
# MODEL_BACKEND's short names; any other value is a `package.module:Class` path.
BACKENDS = {
    "clover": "model_worker.backends.clover:CloverBackend",
    "transformers": "model_worker.backends.transformers:TransformersBackend",
    "openai": "model_worker.backends.openai:OpenAIBackend",
}
DEFAULT_BACKEND = "clover"
# What the shipped backends can do, declared here so that reading it imports no torch; another
# backend's module is imported for its class's `capabilities` (keep heavy imports inside its methods).
CAPABILITIES = {
    # The demo checkpoint writes the library pages it learned; asked to revise one it writes nothing usable.
    "clover": BackendCapabilities(open_domain=False, revises_pages=False, streams="drafts", context=2560),
    "transformers": BackendCapabilities(open_domain=True, revises_pages=True, streams="tokens", context=0),
    # A served model answers a second opinion in one short HTTP call; a local `transformers` model lives in the
    # GPU worker alone, so the web tier never asks it.
    "openai": BackendCapabilities(open_domain=True, revises_pages=True, streams="tokens", context=0,
                                  second_opinion=True),
}
DEFAULT_MODEL_PATH = REPO_ROOT / "model_worker" / "checkpoints" / "clover-demo"
DEVICES = ("auto", "cpu", "cuda")
KERNELS = ("auto", "torch", "fla")  # as model_worker.clover.kernels.KERNELS, named here without importing torch


@dataclass(frozen=True)
class EngineSettings:
    backend: str = DEFAULT_BACKEND
    model_path: Path = DEFAULT_MODEL_PATH
    device: str = "auto"
    decoding: str | None = None  # None: the backend's own default
    dtype: str = "auto"  # transformers: auto, float32, bfloat16, float16
    max_new_tokens: int | None = None  # cap on a page's tokens; None: what the context leaves
    threads: int | None = None  # CPU torch threads; None: the cores not already busy
    batch: int = 1  # clover: pages one worker decodes together (continuous batching); 1: one at a time
    graphs: bool = False  # clover, verified decoding: draft and verify forwards as captured CUDA graphs
    kernels: str = "auto"  # clover: delta-rule kernels of long causal passes (model_worker.clover.kernels)
    base_url: str = "http://127.0.0.1:8000/v1"  # openai: the server's API root
    model_name: str = ""  # openai: the served model's name
    api_key: str = ""  # openai: sent as a bearer token when set
    timeout_s: float = 300.0  # openai: longest wait for the next piece of a reply

    def __post_init__(self) -> None:
        for name, value in (("MODEL_THREADS", self.threads), ("MODEL_MAX_NEW_TOKENS", self.max_new_tokens),
                            ("MODEL_BATCH", self.batch)):
            if value is not None and value < 1:
                raise ValueError(f"{name}={value} must be at least 1")
        if self.device not in DEVICES:
            raise ValueError(f"MODEL_DEVICE={self.device!r} is not one of {', '.join(DEVICES)}")
        if self.kernels not in KERNELS:
            raise ValueError(f"MODEL_KERNELS={self.kernels!r} is not one of {', '.join(KERNELS)}")
        if self.decoding is not None and self.decoding not in DECODINGS:
            raise ValueError(f"MODEL_DECODING={self.decoding!r} is not one of {', '.join(DECODINGS)}")
        if self.backend not in BACKENDS and ":" not in self.backend:
            raise ValueError(f"MODEL_BACKEND={self.backend!r} is not one of {', '.join(BACKENDS)} "
                             "and does not look like 'package.module:Class'")
        if self.max_new_tokens is not None and self.max_new_tokens < 1:
            raise ValueError(f"MODEL_MAX_NEW_TOKENS={self.max_new_tokens} must be at least 1")

    @property
    def backend_spec(self) -> str:
        """The `package.module:Class` path of the backend."""
        return BACKENDS.get(self.backend, self.backend)


def engine_settings(environ: Mapping[str, str] | None = None) -> EngineSettings:
    """Read MODEL_BACKEND, MODEL_PATH, MODEL_DEVICE, MODEL_DECODING, MODEL_THREADS, MODEL_MAX_NEW_TOKENS,
    MODEL_BATCH, MODEL_GRAPHS and MODEL_KERNELS; relative paths are taken from the repo root."""
    env = os.environ if environ is None else environ
    path = Path(env.get("MODEL_PATH") or DEFAULT_MODEL_PATH)
    if not path.is_absolute():
        path = REPO_ROOT / path
    batch = env_number("MODEL_BATCH", None, environ=env)
    return EngineSettings(
        backend=env.get("MODEL_BACKEND") or DEFAULT_BACKEND,
        model_path=path,
        device=(env.get("MODEL_DEVICE") or "auto").lower(),
        decoding=(env.get("MODEL_DECODING") or "").lower() or None,
        dtype=(env.get("MODEL_DTYPE") or "auto").lower(),
        max_new_tokens=env_number("MODEL_MAX_NEW_TOKENS", None, environ=env),
        threads=env_number("MODEL_THREADS", None, environ=env),
        batch=1 if batch is None else batch,
        graphs=_flag(env, "MODEL_GRAPHS"),
        kernels=(env.get("MODEL_KERNELS") or "auto").strip().lower(),
        base_url=env.get("MODEL_BASE_URL") or EngineSettings.base_url,
        model_name=env.get("MODEL_NAME") or "",
        api_key=env.get("MODEL_API_KEY") or "",
        timeout_s=env_number("MODEL_TIMEOUT_S", None, float, environ=env) or EngineSettings.timeout_s,
    )


def gpu_worker_pool(settings: EngineSettings | None = None) -> list[str]:
    """The gpu worker's pool options: one page at a time in one process, or, with MODEL_BATCH = N > 1,
    N threads of one process, whose pages share the batches of one loaded model."""
    batch = (settings or engine_settings()).batch
    return ["-c", "1"] if batch == 1 else ["--pool", "threads", "-c", str(batch)]


def resolve_device(device: str) -> str:
    """Turn `auto` into `cuda` when a GPU is visible, else `cpu`."""
    if device == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def default_threads() -> int:
    """CPU cores not already busy, at least 1: oversubscribed torch threads spin-wait and crawl."""
    cores = os.cpu_count() or 1
    return max(1, min(cores, round(cores - os.getloadavg()[0])))


def _flag(env: Mapping[str, str], name: str) -> bool:
    raw = (env.get(name) or "").strip().lower()
    if raw in ("", "0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{name}={env[name]!r} is not one of 1, 0, true, false, yes, no, on, off")


def load_backend(settings: EngineSettings | None = None):
    """Instantiate the configured page backend: `Class.from_settings(settings)` when the class has it,
    else `Class(path=..., device=...[, decoding=...])`."""
    from model_worker.backends import backend_class

    settings = settings or engine_settings()
    cls = backend_class(settings.backend_spec)
    if settings.batch > 1 and "batch" not in inspect.signature(cls).parameters:
        raise ValueError(f"MODEL_BATCH={settings.batch}: the {settings.backend} backend writes one page at a "
                         "time (continuous batching is the clover backend's)")
    if settings.graphs and "graphs" not in inspect.signature(cls).parameters:
        raise ValueError(f"MODEL_GRAPHS: the {settings.backend} backend does not capture its forwards "
                         "(CUDA graphs are the clover backend's)")
    if settings.kernels != "auto" and "kernels" not in inspect.signature(cls).parameters:
        raise ValueError(f"MODEL_KERNELS={settings.kernels}: the {settings.backend} backend does not run the "
                         "engine's delta-rule kernels (they are the clover backend's)")
    if hasattr(cls, "from_settings"):
        return cls.from_settings(settings)
    options = {k: v for k, v in (("decoding", settings.decoding), ("threads", settings.threads),
                                 ("max_new_tokens", settings.max_new_tokens)) if v is not None}
    if settings.batch > 1:
        options["batch"] = settings.batch
    if settings.graphs:
        options["graphs"] = True
    if settings.kernels != "auto":
        options["kernels"] = settings.kernels
    return cls(path=settings.model_path, device=settings.device, **options)


def backend_capabilities(which: EngineSettings | str | None = None) -> BackendCapabilities:
    """What a backend can do, without loading a model or its libraries: a shipped backend's declaration, or
    another class's `capabilities` (`LIBRARY_ONLY` when it declares none). `which`: settings, a short name
    or a dotted path; None reads the environment's MODEL_BACKEND."""
    name = (which or engine_settings()).backend if not isinstance(which, str) else which
    short = next((key for key, path in BACKENDS.items() if path == name), name)
    if short in CAPABILITIES:
        return CAPABILITIES[short]
    from model_worker.backends import backend_class

    try:
        cls = backend_class(name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ImportError(f"backend {name!r} cannot be imported: {exc}") from exc
    declared = getattr(cls, "capabilities", LIBRARY_ONLY)
    if not isinstance(declared, BackendCapabilities):
        raise TypeError(f"{name}.capabilities is not a BackendCapabilities")
    return declared


def writable_topics(settings: EngineSettings | None = None) -> frozenset[str] | None:
    """The library pages (slugs, as `PageRequest.topic` names them) a library-only backend can write: the
    pages its checkpoint learned (`training.json` in MODEL_PATH: `writable_pages`, else `pages`; read
    without torch). None when the backend is open-domain, is not the Clover engine (which alone reads
    such a record), or its checkpoint does not say."""
    settings = settings or engine_settings()
    if BACKENDS.get(settings.backend, settings.backend) != BACKENDS["clover"]:
        return None
    if backend_capabilities(settings).open_domain:
        return None
    path = settings.model_path / "training.json"
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    return _trained_pages(path, stamp)


@functools.lru_cache(maxsize=8)
def _trained_pages(path: Path, stamp: int) -> frozenset[str] | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        pages = record.get("writable_pages", record.get("pages"))
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(pages, list) or not all(isinstance(p, str) for p in pages):
        return None
    return frozenset(pages)


def learned_notes(model_path: Path) -> bool:
    """Whether a Clover checkpoint was trained on prompts with a teacher's `<|note|>` (`"notes": true` in its
    training.json). The demo checkpoint never saw one: given a note, it writes a broken page."""
    try:
        record = json.loads((Path(model_path) / "training.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and record.get("notes") is True
