"""Run chatlas 0.23.0's own test suite against chatlas_like, and say what passes and why not.

Usage (from the repository root, with the project's venv)::

    make chatlas-suite
    # or
    .venv/bin/python scripts/chatlas_suite.py [--timeout SECONDS] [--mode both|strict|lenient]

What it does, step by step; everything it fetches or writes lies under ``.chatlas-suite/``
(ignored by git). No file of chatlas's is ever copied into the repository: its tests are
read in place from the extracted source distribution.

1. ``python -m pip download --no-deps --no-binary :all: chatlas==0.23.0`` into
   ``.chatlas-suite/sdist/``, extracted to ``.chatlas-suite/src/``; its ``tests/`` folder,
   cassettes and snapshots included, is what runs.
2. Installs, with ``pip install --no-deps --target .chatlas-suite/deps``, the test plugins
   chatlas's suite needs that the venv lacks (vcrpy, pytest-recording, pytest-timeout,
   tenacity, wrapt), and chatlas 0.23.0 itself with its dependencies into
   ``.chatlas-suite/real/``. The real chatlas is used only for the census below: it is
   never on the path when the tests run.
3. Writes two small modules of its own into ``.chatlas-suite/shim/``: ``sitecustomize.py``
   (a network guard and, when asked, the import alias) and a pytest plugin that records
   the census and the outcomes.
4. Census: ``pytest --collect-only`` of chatlas's tests against the *real* chatlas, so that
   a test module that cannot even load against chatlas_like still counts with all its
   tests. Each collected test is in scope unless it exercises another provider:

   * its file name, its test name or its parameter ids contain a provider word other than
     Anthropic (openai, google, gemini, vertex, bedrock, mantle, databricks, snowflake,
     azure, ollama, mistral, groq, deepseek, github, huggingface, cloudflare, openrouter,
     portkey, posit, perplexity, lmstudio, httpx2, boto3, aws), compared as whole words
     (``composites`` is not ``posit``); or
   * one of its fixtures is named after such a provider (``openai_chat``); or
   * the test function's own code names one (``ChatOpenAI``, ``ChatBedrockAnthropic``,
     ``OpenAIProvider``, ``_provider_google``...), read from its identifiers, not its
     strings or comments.

   Tests that reach another provider only through a helper defined elsewhere stay in
   scope; their failures are grouped as "other provider via a helper".
5. Run: pytest (a subprocess of the current interpreter) on the in-scope tests, with the
   alias on: a meta path finder maps ``chatlas`` to ``chatlas_like`` and
   ``chatlas.<sub>`` to ``chatlas_like.<sub>`` where chatlas_like has a module of that
   name (``chatlas._content``, ``chatlas._chat``, ``chatlas.types``...), handing back the
   very same module objects; any other ``chatlas.<sub>`` (``chatlas._provider_anthropic``,
   ``chatlas._utils``...) is missing, as it is in chatlas_like. Cassettes replay with
   ``--record-mode=none``; ``ANTHROPIC_API_KEY`` is a dummy; each test has a timeout
   (pytest-timeout) and the whole run a global one.

   It runs twice (``--mode both``, the default), giving two counts:

   * STRICT: chatlas's tests as they are. A test module that imports a name chatlas has
     and chatlas_like lacks (``from chatlas._display import DEFAULT_IMAGE_MAX_LINES``)
     fails to load, and every test in it counts as an error. This is the honest "runs
     unchanged" figure.
   * LENIENT: such a name (one the census saw in that chatlas module; names chatlas does
     not have either still raise) imports as a placeholder that fails the moment it is
     used: calling it, reading an attribute, iterating, comparing, hashing, ``str()``,
     truth value, ``isinstance`` against it or subclassing it raise
     ``MissingChatlasName`` (only its ``repr`` is safe). Tests that never touch the name
     run for real; a test that uses it fails under "uses a private name chatlas_like
     lacks"; a module that uses it at import (``class P(Provider)``) still cannot load.
     ``monkeypatch``/``mock.patch`` of such a name patch chatlas_like's module and put it
     back as it was. A ``pytest.raises(Exception)`` around a use would hide it.
6. Prints, for each mode, the total in scope, passed, failed, errors, skipped, and the
   failures grouped by cause (classified from the exception's type and message), with a
   few test ids per group, then both counts side by side and how the tests of modules
   that could not load strictly fare leniently; writes everything to
   ``.chatlas-suite/results.json`` (strict) and ``results-lenient.json``.

No traffic leaves the machine: the generated ``sitecustomize.py`` (on ``PYTHONPATH`` for
every Python process of the run, MCP test servers included) refuses any name lookup or
connection that is not loopback or a Unix socket, and VCR replays in record mode "none".
The script checks the guard before the run and aborts if it does not hold.

Which ``chatlas_like`` is tested: whichever the interpreter imports (with ``make`` the
repository's editable install); the script prints its location.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import textwrap
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

VERSION = "0.23.0"
ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".chatlas-suite"
SDIST_DIR = CACHE / "sdist"
SRC_PARENT = CACHE / "src"
SRC = SRC_PARENT / f"chatlas-{VERSION}"
DEPS = CACHE / "deps"
REAL = CACHE / "real"
SHIM = CACHE / "shim"
CENSUS = CACHE / "census.json"
OUTCOMES = CACHE / "outcomes.json"
RESULTS = CACHE / "results.json"
MODULES = SHIM / "chatlas_modules.txt"
NAMES = SHIM / "chatlas_names.json"
MODES = ("strict", "lenient")

# Test plugins chatlas's suite uses that the project's venv does not carry (pytest,
# pytest-asyncio, syrupy, PyYAML and OpenTelemetry it does).
TEST_DEPS = [
    "vcrpy",
    "pytest-recording",
    "pytest-timeout",
    "tenacity",
    "wrapt",
    "httpx",
    "httpcore",
]

# Provider words other than Anthropic's; see the module docstring.
OTHER_PROVIDERS = [
    "openai",
    "google",
    "gemini",
    "vertex",
    "bedrock",
    "mantle",
    "databricks",
    "snowflake",
    "azure",
    "ollama",
    "mistral",
    "groq",
    "deepseek",
    "github",
    "huggingface",
    "cloudflare",
    "openrouter",
    "portkey",
    "posit",
    "perplexity",
    "lmstudio",
    "httpx2",
    "boto3",
    "aws",
]

PER_TEST_TIMEOUT_S = 60
GLOBAL_TIMEOUT_S = 3600
EXAMPLES_PER_GROUP = 3


# --- generated files ---------------------------------------------------------------------

SITECUSTOMIZE = '''\
"""Generated by scripts/chatlas_suite.py: a network guard, and the chatlas alias on request."""

import importlib
import importlib.abc
import importlib.util
import ipaddress
import os
import socket
import sys
import types

_BLOCKED = "chatlas_suite: network access outside loopback is blocked"


def _loopback_host(host):
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    host = str(host).strip("[]").split("%")[0]
    if host in ("localhost", "localhost.localdomain", "ip6-localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_address(family, address):
    if family not in (socket.AF_INET, socket.AF_INET6):
        return  # Unix sockets and the like stay on the machine
    host = address[0] if isinstance(address, tuple) else address
    if not _loopback_host(host):
        raise OSError(_BLOCKED + f" ({host!r})")


_real_getaddrinfo = socket.getaddrinfo
_real_gethostbyname = socket.gethostbyname
_real_gethostbyname_ex = socket.gethostbyname_ex


def _getaddrinfo(host, *args, **kwargs):
    if not _loopback_host(host):
        raise socket.gaierror(_BLOCKED + f" ({host!r})")
    return _real_getaddrinfo(host, *args, **kwargs)


def _gethostbyname(host):
    if not _loopback_host(host):
        raise socket.gaierror(_BLOCKED + f" ({host!r})")
    return _real_gethostbyname(host)


def _gethostbyname_ex(host):
    if not _loopback_host(host):
        raise socket.gaierror(_BLOCKED + f" ({host!r})")
    return _real_gethostbyname_ex(host)


socket.getaddrinfo = _getaddrinfo
socket.gethostbyname = _gethostbyname
socket.gethostbyname_ex = _gethostbyname_ex

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_sendto = socket.socket.sendto


def _connect(self, address):
    _check_address(self.family, address)
    return _real_connect(self, address)


def _connect_ex(self, address):
    _check_address(self.family, address)
    return _real_connect_ex(self, address)


def _sendto(self, data, *args):
    _check_address(self.family, args[-1])
    return _real_sendto(self, data, *args)


socket.socket.connect = _connect
socket.socket.connect_ex = _connect_ex
socket.socket.sendto = _sendto


_PLACEHOLDERS = {}


def _placeholder(name):
    """A stand-in for a chatlas provider chatlas_like does not have: it fails when used."""
    if name not in _PLACEHOLDERS:
        from chatlas_like._not_here import not_here

        def __new__(cls, *args, **kwargs):
            raise not_here(name)

        _PLACEHOLDERS[name] = type(name, (), {"__new__": __new__, "__module__": "chatlas"})
    return _PLACEHOLDERS[name]


_LENIENT = os.environ.get("CHATLAS_SUITE_LENIENT") == "1"


class MissingChatlasName(Exception):
    """Lenient mode: a test used a name chatlas 0.23.0 has and chatlas_like lacks."""


def _used(self, *args, **kwargs):
    raise MissingChatlasName(
        f"{object.__getattribute__(self, '_suite_name')}: a name chatlas has and "
        "chatlas_like lacks (lenient-mode placeholder, used here)"
    )


class MissingChatlasNamePlaceholder:
    """What a missing name is bound to in lenient mode: it can be imported and passed
    around, and any use of it (call, attribute, iteration, subclassing, comparison,
    truthiness, hashing, str, isinstance...) raises MissingChatlasName."""

    __slots__ = ("_suite_name",)

    def __init__(self, name):
        object.__setattr__(self, "_suite_name", name)

    def __repr__(self):
        return f"<missing chatlas name {object.__getattribute__(self, '_suite_name')}>"

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # Python's and pytest's own probes (__wrapped__...)
        _used(self)


for _op in (
    "call bool iter aiter next anext len contains getitem setitem delitem reversed "
    "eq ne lt le gt ge hash str format bytes int float complex index round fspath "
    "enter exit aenter aexit await mro_entries instancecheck subclasscheck "
    "setattr delattr reduce reduce_ex copy deepcopy neg pos abs invert "
    "add sub mul truediv floordiv mod divmod pow matmul and or xor lshift rshift "
    "radd rsub rmul rtruediv rfloordiv rmod rdivmod rpow rmatmul rand ror rxor "
    "rlshift rrshift"
).split():
    setattr(MissingChatlasNamePlaceholder, f"__{_op}__", _used)

_MISSING = {}
_CHATLAS_NAMES = []


def _chatlas_has(module, name):
    """Whether chatlas 0.23.0's module has the name (as the census saw it); for a module
    the census could not import, any name that is not a dunder."""
    if not _CHATLAS_NAMES:
        path = os.environ.get("CHATLAS_SUITE_NAMES")
        names = {}
        if path and os.path.exists(path):
            import json

            with open(path) as f:
                names = json.load(f)
        _CHATLAS_NAMES.append(names)
    known = _CHATLAS_NAMES[0].get(module)
    return name in known if known is not None else not name.startswith("__")


def _missing(module, name):
    key = f"{module}.{name}"
    if key not in _MISSING:
        _MISSING[key] = MissingChatlasNamePlaceholder(key)
    return _MISSING[key]


class _Proxy(types.ModuleType):
    """chatlas.<sub>: chatlas_like.<sub>'s names (or, failing those, chatlas_like's public
    ones); setting or deleting a name acts on chatlas_like.<sub> itself. In lenient mode a
    name chatlas's module has and chatlas_like lacks is a MissingChatlasNamePlaceholder."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        target = self.__dict__.get("_suite_target")
        from chatlas_like._not_here import NOT_HERE

        if self.__name__ == "chatlas" and name in NOT_HERE:
            return _placeholder(name)
        if target is not None:
            try:
                return getattr(target, name)
            except AttributeError:
                pass
        if name in _public():
            import chatlas_like

            value = getattr(chatlas_like, name, None)
            if value is None:
                import chatlas_like.types

                value = getattr(chatlas_like.types, name)
            return value
        if _LENIENT and _chatlas_has(self.__name__, name):
            return _missing(self.__name__, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __setattr__(self, name, value):
        target = self.__dict__.get("_suite_target")
        if isinstance(value, MissingChatlasNamePlaceholder):
            # monkeypatch / mock.patch putting the "original" back: undo the patch
            self.__dict__.pop(name, None)
            if target is not None and name in vars(target):
                delattr(target, name)
            return
        if name.startswith("__") or target is None or isinstance(value, _Proxy):
            super().__setattr__(name, value)
        else:
            setattr(target, name, value)

    def __delattr__(self, name):
        target = self.__dict__.get("_suite_target")
        if name in self.__dict__ or target is None:
            super().__delattr__(name)
        else:
            delattr(target, name)

    def __dir__(self):
        target = self.__dict__.get("_suite_target")
        return sorted(set(dir(target) if target is not None else ()) | set(self.__dict__))


_PUBLIC = []


def _public():
    if not _PUBLIC:
        import chatlas_like
        import chatlas_like.types

        _PUBLIC.append(set(chatlas_like.__all__) | set(getattr(chatlas_like.types, "__all__", ())))
    return _PUBLIC[0]


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return _Proxy(spec.name)

    def exec_module(self, module):
        module.__dict__["_suite_target"] = (
            importlib.import_module(self.target) if self.target else None
        )
        module.__dict__["__path__"] = []  # so that chatlas.<sub>.<sub> comes back here


def _chatlas_modules():
    path = os.environ.get("CHATLAS_SUITE_MODULES")
    if not path:
        return set()
    with open(path) as f:
        return set(f.read().split())


class _AliasFinder(importlib.abc.MetaPathFinder):
    """chatlas -> chatlas_like, chatlas.<sub> -> chatlas_like.<sub> where that exists, or
    chatlas_like's public names where only chatlas has a module of that name."""

    def __init__(self):
        self.chatlas_modules = _chatlas_modules()

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "chatlas" and not fullname.startswith("chatlas."):
            return None
        real = "chatlas_like" + fullname[len("chatlas"):]
        if real in sys.modules:
            found = True
        else:
            try:
                found = importlib.util.find_spec(real) is not None
            except ModuleNotFoundError:
                found = False
        if not found:
            if fullname not in self.chatlas_modules:
                raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
            real = None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real), is_package=True)


if os.environ.get("CHATLAS_SUITE_ALIAS") == "1":
    sys.meta_path.insert(0, _AliasFinder())
'''

PLUGIN = '''\
"""Generated by scripts/chatlas_suite.py: records the census or the outcomes of a run."""

import io
import json
import os
import re
import tokenize
import inspect

import pytest

MODE = os.environ["CHATLAS_SUITE_MODE"]  # "census" or "run"
OUT = os.environ["CHATLAS_SUITE_OUT"]
OTHER = set(os.environ["CHATLAS_SUITE_OTHER"].split())
SUFFIXES = ("", "provider", "chat", "client", "completions", "responses", "converse")

_records = {}
_collect_errors = {}


def _words(text):
    return {w for w in re.split(r"[^a-z0-9]+", text.lower()) if w}


def _identifier_hits(name):
    hits = set()
    for part in name.lower().split("_"):
        for word in OTHER:
            for stem in (part, part[4:] if part.startswith("chat") else part):
                if stem.startswith(word) and stem[len(word):] in SUFFIXES:
                    hits.add(word)
    return hits


def _source_hits(function):
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return set()
    hits = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.NAME:
                hits |= _identifier_hits(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return hits


def _scope(item):
    path, _, rest = item.nodeid.partition("::")
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    reasons = []
    if _words(stem) & OTHER:
        reasons.append("file name")
    if _words(rest) & OTHER:
        reasons.append("test name or parameters")
    fixtures = set()
    for name in getattr(item, "fixturenames", ()):
        fixtures |= _identifier_hits(name)
    if fixtures:
        reasons.append("fixture " + ",".join(sorted(fixtures)))
    code = _source_hits(getattr(item, "function", None))
    if code:
        reasons.append("test code names " + ",".join(sorted(code)))
    return reasons


def pytest_collection_modifyitems(session, config, items):
    if MODE == "census":
        for item in items:
            reasons = _scope(item)
            _records[item.nodeid] = {"in_scope": not reasons, "why_out": reasons}
        return
    with open(os.environ["CHATLAS_SUITE_CENSUS"]) as f:
        wanted = {k for k, v in json.load(f)["tests"].items() if v["in_scope"]}
    keep = [i for i in items if i.nodeid in wanted]
    drop = [i for i in items if i.nodeid not in wanted]
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


def pytest_collectreport(report):
    if report.failed:
        text = report.longreprtext
        lines = [l[4:].strip() for l in text.splitlines() if l.startswith("E   ")]
        _collect_errors[report.nodeid] = {
            "message": " | ".join(lines[-3:]) if lines else text[-600:],
            "text": text[-3000:],
        }


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if MODE != "run":
        return
    rec = _records.setdefault(item.nodeid, {"outcome": "passed"})
    if report.skipped and call.when in ("setup", "call"):
        if rec["outcome"] == "passed":
            rec["outcome"] = "skipped"
            longrepr = report.longrepr
            rec["message"] = str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)
        return
    if report.failed:
        excinfo = call.excinfo
        exc_type = ""
        message = ""
        if excinfo is not None:
            cls = excinfo.type
            exc_type = f"{cls.__module__}.{cls.__qualname__}"
            message = str(excinfo.value)
        if rec["outcome"] in ("passed", "skipped"):
            rec["outcome"] = "failed" if call.when == "call" else "error"
            rec["when"] = call.when
            rec["exc_type"] = exc_type
            rec["message"] = message[:2000]
            rec["text"] = report.longreprtext[-3000:]


def pytest_sessionfinish(session, exitstatus):
    data = {"tests": _records, "collect_errors": _collect_errors}
    if MODE == "census":
        import chatlas
        import chatlas.types

        data["public_names"] = sorted(set(chatlas.__all__) | set(chatlas.types.__all__))
        # Each chatlas module's names, for the lenient mode's placeholders; a module that
        # cannot be imported here (an optional dependency it needs is absent) is left out.
        import importlib
        import warnings

        names = {}
        with open(os.environ["CHATLAS_SUITE_MODULES"]) as f:
            modules = f.read().split()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for module in modules:
                try:
                    names[module] = sorted(vars(importlib.import_module(module)))
                except Exception:
                    pass
        data["module_names"] = names
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1)
'''


# --- steps ------------------------------------------------------------------------------


def log(message: str) -> None:
    print(f"[chatlas-suite] {message}", flush=True)


def pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"pip failed: {' '.join(cmd)}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def fetch_sources() -> Path:
    tarballs = sorted(SDIST_DIR.glob(f"chatlas-{VERSION}.tar.gz"))
    if not tarballs:
        log(f"downloading chatlas {VERSION}'s source distribution")
        SDIST_DIR.mkdir(parents=True, exist_ok=True)
        pip(
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"chatlas=={VERSION}",
            "-d",
            str(SDIST_DIR),
        )
        tarballs = sorted(SDIST_DIR.glob(f"chatlas-{VERSION}.tar.gz"))
    tarball = tarballs[0]
    if not (SRC / "tests").is_dir():
        log(f"extracting {tarball.name}")
        SRC_PARENT.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tarball) as tar:
            tar.extractall(SRC_PARENT, filter="data")
    return tarball


def install_deps(tarball: Path) -> None:
    stamp = DEPS / ".stamp"
    if not stamp.exists():
        log("installing the test plugins: " + ", ".join(TEST_DEPS))
        pip("install", "-q", "--upgrade", "--no-deps", "--target", str(DEPS), *TEST_DEPS)
        stamp.touch()
    stamp = REAL / ".stamp"
    if not stamp.exists():
        log(f"installing chatlas {VERSION} itself (for the census only)")
        pip("install", "-q", "--upgrade", "--target", str(REAL), str(tarball))
        stamp.touch()


def write_shim() -> None:
    SHIM.mkdir(parents=True, exist_ok=True)
    (SHIM / "sitecustomize.py").write_text(SITECUSTOMIZE)
    (SHIM / "_chatlas_suite_plugin.py").write_text(PLUGIN)
    package = REAL / "chatlas"
    modules = ["chatlas"]
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(REAL).with_suffix("").parts
        modules.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    MODULES.write_text("\n".join(modules) + "\n")


def base_env(
    pythonpath: list[Path], mode: str, out: Path, alias: bool, lenient: bool = False
) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "PYTEST_", "CHATLAS_SUITE_")) and k != "PYTHONPATH"
    }
    env.update(
        PYTHONPATH=os.pathsep.join(str(p) for p in pythonpath),
        PYTHONDONTWRITEBYTECODE="1",
        ANTHROPIC_API_KEY="dummy-anthropic-key",  # the dummy chatlas's conftest recognises
        CHATLAS_SUITE_MODE=mode,
        CHATLAS_SUITE_OUT=str(out),
        CHATLAS_SUITE_CENSUS=str(CENSUS),
        CHATLAS_SUITE_OTHER=" ".join(OTHER_PROVIDERS),
        CHATLAS_SUITE_ALIAS="1" if alias else "0",
        CHATLAS_SUITE_LENIENT="1" if lenient else "0",
        CHATLAS_SUITE_MODULES=str(MODULES),
        CHATLAS_SUITE_NAMES=str(NAMES),
    )
    return env


def check_guard(env: dict[str, str]) -> None:
    """Abort unless the generated guard refuses a lookup and a connection off loopback."""
    probe = textwrap.dedent(
        """
        import socket
        failures = []
        try:
            socket.getaddrinfo("example.com", 443)
            failures.append("lookup")
        except OSError:
            pass
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect(("192.0.2.1", 443))
            failures.append("connect")
        except OSError as e:
            if "blocked" not in str(e):
                failures.append("connect not refused by the guard: " + str(e))
        print("GUARD-OK" if not failures else "GUARD-FAILED " + ",".join(failures))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60
    )
    if "GUARD-OK" not in done.stdout:
        sys.exit(f"network guard does not hold: {done.stdout}{done.stderr}")


def test_files() -> list[str]:
    files = []
    for path in sorted((SRC / "tests").glob("test_*.py")):
        words = set(re.split(r"[^a-z0-9]+", path.stem.lower()))
        if not words & set(OTHER_PROVIDERS):
            files.append(f"tests/{path.name}")
    return files


def pytest_cmd(files: list[str], *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "_chatlas_suite_plugin",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(SRC),
        "--continue-on-collection-errors",
        *extra,
        *files,
    ]


def census(files: list[str]) -> dict[str, Any]:
    log("census: collecting chatlas's tests against the real chatlas")
    env = base_env([SHIM, REAL, DEPS], "census", CENSUS, alias=False)
    check_guard(env)
    done = subprocess.run(
        pytest_cmd(files, "--collect-only", "-q"),
        cwd=SRC,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    data = json.loads(CENSUS.read_text())
    if data["collect_errors"]:
        sys.exit(
            "the census could not collect "
            + ", ".join(data["collect_errors"])
            + "\n"
            + done.stdout[-3000:]
        )
    NAMES.write_text(json.dumps(data.get("module_names", {})))
    return data


def with_mode(path: Path, mode: str) -> Path:
    """results.json for the strict run, results-lenient.json for the lenient one."""
    return path if mode == "strict" else path.with_name(f"{path.stem}-{mode}{path.suffix}")


def run_suite(files: list[str], timeout_s: int, mode: str) -> tuple[dict[str, Any], str]:
    import chatlas_like

    log(
        f"{mode} run: the in-scope tests against chatlas_like from "
        f"{Path(chatlas_like.__file__).parent}"
    )
    outcomes = with_mode(OUTCOMES, mode)
    outcomes.unlink(missing_ok=True)
    env = base_env([SHIM, DEPS], "run", outcomes, alias=True, lenient=mode == "lenient")
    check_guard(env)
    extra = ["-q", "-rN", "--record-mode=none", "-W", "ignore::DeprecationWarning"]
    extra += [f"--timeout={timeout_s}", "--timeout-method=thread"]
    try:
        done = subprocess.run(
            pytest_cmd(files, *extra),
            cwd=SRC,
            env=env,
            capture_output=True,
            text=True,
            timeout=GLOBAL_TIMEOUT_S,
        )
        tail = done.stdout[-2000:] + done.stderr[-2000:]
    except subprocess.TimeoutExpired:
        sys.exit(f"the run passed the global timeout of {GLOBAL_TIMEOUT_S}s")
    with_mode(CACHE / "pytest-output.txt", mode).write_text(done.stdout + done.stderr)
    return json.loads(outcomes.read_text()), tail


# --- classification ---------------------------------------------------------------------

_OTHER = (
    "OpenAI|Google|Gemini|Vertex|Bedrock|Databricks|Snowflake|Azure|Ollama|Mistral|Groq|"
    "DeepSeek|Github|HuggingFace|Cloudflare|OpenRouter|Portkey|Posit|Perplexity|LMStudio"
)
# A name of another provider's class or module in an error message.
PROVIDER_RE = re.compile(
    rf"\b(?:Chat(?:{_OTHER})\w*|\w*(?:{_OTHER})\w*Provider"
    rf"|_provider_(?:{_OTHER.lower()})\w*|(?:openai|google|boto3|botocore)(?:\.\w+)*)\b"
)
MISSING_NAME_RE = re.compile(
    r"cannot import name '([^']+)'|has no attribute '([^']+)'|No module named '([^']+)'"
)
# The lenient mode's placeholder, as its exception or its repr names it.
PLACEHOLDER_RE = re.compile(
    r"(chatlas[\w.]*): a name chatlas has and chatlas_like lacks|<missing chatlas name (chatlas[\w.]*)>"
)


def classify(rec: dict[str, Any], public: set[str]) -> str:
    """A cause for a failed or erroring test, from its exception's type and message."""
    exc = rec.get("exc_type", "")
    msg = rec.get("message", "")
    text = rec.get("text", "")
    if rec.get("collect_error"):
        # "SomeError: message" as pytest printed it for the module.
        head, _, rest = msg.partition(": ")
        inner = {"exc_type": head.strip(), "message": rest or msg}
        return "module cannot load: " + classify(inner, public)
    short = exc.rsplit(".", 1)[-1]
    placeholder = PLACEHOLDER_RE.search(msg) or PLACEHOLDER_RE.search(text)
    if short == "MissingChatlasName" or placeholder:
        name = next((g for g in placeholder.groups() if g), "") if placeholder else ""
        if PROVIDER_RE.search(name):
            return "other provider (directly or via a helper)"
        kind = "public" if name.rsplit(".", 1)[-1] in public else "private"
        return f"uses a {kind} name chatlas_like lacks (lenient placeholder)"
    if short == "NotInChatlasLikeError" or (
        short in ("ImportError", "AttributeError") and PROVIDER_RE.search(msg)
    ):
        return "other provider (directly or via a helper)"
    if "Timeout" in msg[:200] and "Failed" in short:
        return "timed out"
    if "CannotOverwriteExistingCassette" in exc + msg + text:
        return "cassette does not match the request (body or path differs)"
    if "network access outside loopback is blocked" in msg + text:
        return "tried to reach the network"
    missing = MISSING_NAME_RE.search(msg)
    if short in ("ImportError", "ModuleNotFoundError", "AttributeError") and missing:
        imported, attribute, module = missing.groups()
        if module:
            return "private module chatlas_like lacks"
        name = imported or attribute or ""
        if attribute and msg.startswith("'NoneType' object"):
            return "behaviour differs (a value is None)"
        if attribute and not msg.startswith("module "):
            # 'X' object has no attribute / type object 'X' has no attribute
            if name.startswith("_"):
                return "chatlas internals (private attribute of an object)"
            return "public method or attribute chatlas_like lacks"
        if name in public:
            return "public name chatlas_like lacks"
        return "private name chatlas_like lacks"
    if "snapshot" in (msg + text).lower() and short == "AssertionError":
        return "snapshot differs"
    if short in ("AssertionError", "Failed"):  # Failed: pytest.raises/warns did not see it
        return "behaviour differs (assertion)"
    if short == "TypeError":
        return "signature or type differs (TypeError)"
    return f"other exception ({short or 'unknown'})"


def summarise(census_data: dict[str, Any], outcomes: dict[str, Any]) -> dict[str, Any]:
    in_scope = [k for k, v in census_data["tests"].items() if v["in_scope"]]
    results: dict[str, dict[str, Any]] = {}
    errors_by_file = {k.split("::", 1)[0]: v for k, v in outcomes["collect_errors"].items() if k}
    for nodeid in in_scope:
        rec = outcomes["tests"].get(nodeid)
        if rec is None:
            path = nodeid.split("::", 1)[0]
            if path in errors_by_file:
                err = errors_by_file[path]
                rec = {"outcome": "error", "when": "collect", "collect_error": True}
                rec["message"] = err["message"]
                rec["text"] = err["text"]
            else:
                rec = {"outcome": "error", "when": "collect", "message": "not collected"}
                rec["exc_type"] = "NotCollected"
        results[nodeid] = rec
    counts = Counter(r["outcome"] for r in results.values())
    public = set(census_data.get("public_names", ()))
    groups: dict[str, list[str]] = defaultdict(list)
    for nodeid, rec in results.items():
        if rec["outcome"] in ("failed", "error"):
            rec["cause"] = classify(rec, public)
            groups[rec["cause"]].append(nodeid)
    return {
        "chatlas_version": VERSION,
        "total_in_scope": len(in_scope),
        "collected_all": len(census_data["tests"]),
        "counts": dict(counts),
        "groups": {k: sorted(v) for k, v in sorted(groups.items(), key=lambda kv: -len(kv[1]))},
        "out_of_scope": {
            k: v["why_out"] for k, v in census_data["tests"].items() if not v["in_scope"]
        },
        "collect_errors": outcomes["collect_errors"],
        "tests": results,
    }


TITLES = {
    "strict": "STRICT (chatlas's tests unchanged: a module importing a name chatlas_like "
    "lacks fails whole)",
    "lenient": "LENIENT (a name chatlas has and chatlas_like lacks imports as a placeholder "
    "that fails when used)",
}


def report(summary: dict[str, Any], mode: str) -> None:
    counts = summary["counts"]
    print()
    print(f"chatlas {VERSION}'s tests against chatlas_like, {TITLES[mode]}")
    print(f"  run took {summary['seconds']:.0f}s")
    print(f"  collected (files not named after another provider): {summary['collected_all']}")
    print(f"  in scope (Anthropic or no provider): {summary['total_in_scope']}")
    for key in ("passed", "failed", "error", "skipped"):
        print(f"  {key}: {counts.get(key, 0)}")
    print("  failures and errors by cause:")
    for cause, ids in summary["groups"].items():
        print(f"    {len(ids):4d}  {cause}")
        for nodeid in ids[:EXAMPLES_PER_GROUP]:
            message = summary["tests"][nodeid].get("message", "").splitlines()
            first = message[0][:110] if message else ""
            print(f"            {nodeid}")
            if first:
                print(f"              {first}")
    print(f"  full result: {with_mode(RESULTS, mode).relative_to(ROOT)}")


def compare(strict: dict[str, Any], lenient: dict[str, Any]) -> None:
    """Both counts, and what the lenient run says about the tests whose module could not
    load in the strict run, by the strict cause."""
    print()
    print("strict vs lenient")
    for mode, summary in (("strict", strict), ("lenient", lenient)):
        c = summary["counts"]
        print(
            f"  {mode:8s} in scope {summary['total_in_scope']}: {c.get('passed', 0)} passed, "
            f"{c.get('failed', 0)} failed, {c.get('error', 0)} errors, "
            f"{c.get('skipped', 0)} skipped"
        )
    blocked: dict[str, list[str]] = defaultdict(list)
    for nodeid, rec in strict["tests"].items():
        if rec.get("collect_error"):
            blocked[rec["cause"]].append(nodeid)
    for cause, ids in sorted(blocked.items(), key=lambda kv: -len(kv[1])):
        after = Counter(lenient["tests"][k]["outcome"] for k in ids)
        counts = ", ".join(f"{after.get(k, 0)} {k}" for k in ("passed", "failed", "error"))
        print(f"  strict '{cause}' ({len(ids)} tests), lenient: {counts}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--timeout", type=int, default=PER_TEST_TIMEOUT_S, help="per-test timeout in seconds"
    )
    parser.add_argument(
        "--mode",
        choices=("both", *MODES),
        default="both",
        help="strict (chatlas's tests unchanged), lenient (missing names as placeholders "
        "that fail when used), or both (the default; two runs, two counts)",
    )
    args = parser.parse_args()
    started = time.monotonic()
    tarball = fetch_sources()
    install_deps(tarball)
    write_shim()
    files = test_files()
    census_data = census(files)
    in_files = sorted(
        {k.split("::", 1)[0] for k, v in census_data["tests"].items() if v["in_scope"]}
    )
    modes = MODES if args.mode == "both" else (args.mode,)
    summaries = {}
    for mode in modes:
        run_started = time.monotonic()
        outcomes, tail = run_suite(in_files, args.timeout, mode)
        summary = summarise(census_data, outcomes)
        summary["mode"] = mode
        summary["seconds"] = round(time.monotonic() - run_started, 1)
        summary["pytest_tail"] = tail
        with_mode(RESULTS, mode).write_text(json.dumps(summary, indent=1))
        summaries[mode] = summary
    for mode, summary in summaries.items():
        report(summary, mode)
    if len(summaries) == 2:
        compare(summaries["strict"], summaries["lenient"])
    print(f"\nall done in {time.monotonic() - started:.0f}s")


if __name__ == "__main__":
    main()
