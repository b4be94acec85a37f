"""The scratch venv with chatlas 0.23.0 that the chatlas side of each row runs in.

Made by the runner itself with ``python -m venv`` and pip, reused while its stamp (a
hash of the requirements and the interpreter version) matches.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import venv
from pathlib import Path

__all__ = ["REQUIREMENTS", "VENV_DIR", "chatlas_python", "ensure_chatlas_venv"]

HERE = Path(__file__).resolve().parent
VENV_DIR = HERE / ".venv-chatlas"
# The versions the issue measured; pandas and numpy as in our dev extra.
REQUIREMENTS = (
    "chatlas==0.23.0",
    "anthropic==2.14.0",
    "pandas==3.1.1",
    "numpy==2.4.6",
)


def _stamp() -> str:
    key = "\n".join((*REQUIREMENTS, sys.version))
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def chatlas_python(venv_dir: Path = VENV_DIR) -> Path:
    """The interpreter of the scratch venv."""
    return venv_dir / "bin" / "python"


def ensure_chatlas_venv(venv_dir: Path = VENV_DIR, *, log: Path | None = None) -> Path:
    """Create (or reuse) the chatlas venv; return its interpreter."""
    stamp_file = venv_dir / ".stamp"
    python = chatlas_python(venv_dir)
    if python.exists() and stamp_file.exists() and stamp_file.read_text().strip() == _stamp():
        return python
    print(f"[bench] creating {venv_dir.name} with {', '.join(REQUIREMENTS)} ...", flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir)
    out = open(log, "w") if log is not None else subprocess.DEVNULL  # noqa: SIM115
    try:
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                *REQUIREMENTS,
            ],
            check=True,
            stdout=out,
            stderr=subprocess.STDOUT if log is not None else None,
        )
    finally:
        if log is not None:
            out.close()  # pyright: ignore[reportAttributeAccessIssue]
    stamp_file.write_text(_stamp() + "\n")
    return python


if __name__ == "__main__":
    print(ensure_chatlas_venv())
