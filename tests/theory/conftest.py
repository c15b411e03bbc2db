"""Shared helpers for the claim tests."""

from __future__ import annotations

import dataclasses
import fcntl
import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
import sympy as sp

from softmax_dispersion.theory.kernel import Claim, Implied

T = TypeVar("T")


def with_statement(claim: Claim, statement: sp.Basic) -> Claim:
    """``claim``'s proof, re-aimed at ``statement`` in its last step (a false sibling)."""
    steps = list(claim.proof())[:-1]
    return dataclasses.replace(
        claim,
        id=f"{claim.id}-false",
        statement=statement,
        proof=lambda: [*steps, Implied(statement, "the altered statement")],
    )


def built_once(
    factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]
) -> tuple[Path, T]:
    """``build`` run into a folder once per test session, with its result: under xdist
    the first worker builds (the others wait on a lock), and each worker gets its own
    copy of the folder to build on (the Coq proofs take minutes to compile, and each
    worker compiled them again: pytest 9.2 reads no node id that xdist 3.8 rewrites, so
    ``--dist loadgroup`` no longer keeps a group on one worker)."""
    own = factory.mktemp(name)
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return own, build(own)
    shared = factory.getbasetemp().parent / f"built-once-{name}"  # one per session
    done = shared / "result.pickle"
    shared.mkdir(exist_ok=True)
    with (shared / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            value = build(shared / "folder")
            done.write_bytes(pickle.dumps(value))
    shutil.copytree(shared / "folder", own, dirs_exist_ok=True)  # keeps times: reused
    return own, pickle.loads(done.read_bytes())
