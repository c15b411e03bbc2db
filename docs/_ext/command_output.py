"""A ``command-output`` directive: run one of the package's commands at build time.

The output shown in the docs is always produced by the code being documented::

    ```{command-output} softmax-dispersion certify --family spike --n 16,1e18 --delta 5
    ```

The command must start with ``softmax-dispersion``; it runs as
``python -m softmax_dispersion ...`` in the build's interpreter, in a fresh temporary
folder (so a command may write files, ``--out report``, and its output does not depend
on where the build was started), and a non-zero exit status fails the build.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import tempfile
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

PROGRAM = "softmax-dispersion"


class CommandOutput(SphinxDirective):
    """Run the command in the argument and show it with its output."""

    has_content = False
    required_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list[nodes.Node]:
        command = self.arguments[0].strip()
        words = shlex.split(command)
        if not words or words[0] != PROGRAM:
            raise ExtensionError(f"command-output only runs {PROGRAM}, not {command!r}")
        with tempfile.TemporaryDirectory(prefix="command-output-") as folder:
            done = subprocess.run(
                [sys.executable, "-m", "softmax_dispersion", *words[1:]],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
                cwd=folder,
            )
        if done.returncode != 0:
            raise ExtensionError(
                f"{command!r} exited with {done.returncode}:\n{done.stdout}{done.stderr}"
            )
        text = f"$ {command}\n{done.stdout.rstrip()}"
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("command-output", CommandOutput)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
