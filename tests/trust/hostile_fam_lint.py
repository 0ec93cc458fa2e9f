"""Hostile lint inputs: link loops, pathological expressions, bad encodings, NUL bytes, non-regular files.

Lint parses untrusted source with ``ast``: a file that does not parse is one ``error:`` (exit 2) or a skipped file,
never a ``RecursionError``; walking a folder follows no loop and reads no device or FIFO.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from hostile_case import ANY_EXIT, REFUSED, Builder, Case, Expect, chain, fifo, files, symlink

_LOOP = "import torch\n\ndef f(x):\n    for i in range(3):\n        "
FINDING = "import torch\n\ndef f(x):\n    for i in range(3):\n        v = x.sum().item()\n    return v\n"
FORMATS = {"text": (), "json": ("-f", "json"), "sarif": ("-f", "sarif"), "github": ("-f", "github")}


def cases(rng: random.Random) -> list[Case]:
    out: list[Case] = []
    for label, (build, heavy) in _sources().items():
        for fmt, extra in FORMATS.items():
            out.append(_lint(f"source-{label}", fmt, ("src.py", *extra), build, heavy=heavy))
    for label, (build, paths, expect) in _trees().items():
        for fmt in ("text", "json"):
            out.append(_lint(f"tree-{label}", fmt, (*paths, *FORMATS[fmt]), build,
                             **(expect if fmt == "json" else {"exits": expect.get("exits", ANY_EXIT)})))
    for path in ("/dev/zero", "/dev/null"):
        out.append(_lint(f"device{path.replace('/', '-')}", "text", (path,), files({}), exits=REFUSED,
                         error_line=True))
    return out


def _lint(name: str, fmt: str, argv: tuple[str, ...], build: Builder, *, heavy: bool = False,
          exits: frozenset[int] = ANY_EXIT, **expect: object) -> Case:
    expect.setdefault("error_line", False)
    return Case(id=f"lint/{name}/{fmt}", family="lint", argv=("lint", *argv), build=build,
                expect=Expect(exits=exits, stdout_json=fmt in ("json", "sarif"),
                              check_stdout_text=fmt in ("text", "github"), forbid_line="::error file=evil.py",
                              **expect),
                timeout_s=30 if heavy else 10, heavy=heavy)


def _source(text: str | bytes) -> Builder:
    return files({"src.py": text})


def _sources() -> dict[str, tuple[Builder, bool]]:
    deep = 20_000
    sources: dict[str, str | bytes] = {
        "parens-20k": "x = " + "(" * deep + "1" + ")" * deep + "\n",
        "sum-chain-20k": "x = 1" + " + 1" * deep + "\n",
        "attribute-chain-20k": "x = a" + ".b" * deep + "\n",
        "call-chain-20k": "x = f" + "()" * deep + "\n",
        "subscript-chain-20k": "x = t" + "[m]" * deep + "\n",
        "not-chain-20k": "x = " + "not " * deep + "y\n",
        "unary-chain-20k": "x = " + "-" * deep + "1\n",
        "lambdas-5000": "f = " + "lambda: " * 5000 + "0\n",
        "nested-lists-5000": "x = " + "[" * 5000 + "]" * 5000 + "\n",
        "nested-ifs-100": "".join("    " * i + "if x:\n" for i in range(100)) + "    " * 100 + "y = t[m]\n",
        "nested-defs-90": "".join("    " * i + f"def f{i}():\n" for i in range(90)) + "    " * 90 + "pass\n",
        "comprehension-chain": "x = [" + " ".join(f"for a{i} in b" for i in range(3000)) + "]\n",
        "fstring-nesting": "x = " + "f'{" * 150 + "1" + "}'" * 150 + "\n",
        "nul-byte": b"x = 1\n\x00y = t[m]\n",
        "nul-in-string": b"s = 'a\x00b'\ny = t[m]\n",
        "invalid-utf8": b"s = '\xff\xfe'\ny = t[m]\n",
        "utf16-bom": FINDING.encode("utf-16"),
        "utf8-bom": b"\xef\xbb\xbf" + FINDING.encode(),
        "latin1-cookie": b"# -*- coding: latin-1 -*-\ns = '\xe9'\n" + FINDING.encode(),
        "bogus-cookie": b"# -*- coding: no-such-codec -*-\n" + FINDING.encode(),
        "lone-surrogate-escape": "s = '\\ud800'\n" + FINDING,
        "escape-in-comment": f"{_LOOP}v = x.sum().item()  # \x1b]0;pwned\x07\x1b[2J\n",
        "escape-in-string": f"{_LOOP}v = x.sum().item(); s = '\x1b[2J\x9b1m'\n",
        "injection-in-comment": f"{_LOOP}v = x.sum().item()  # \r\n::error file=evil.py::x\n",
        "form-feed-and-cr": "import torch\ndef f(x):\n\x0c    for i in range(3):\r        v = x.sum().item()\n",
        "syntax-error": "def f(:\n",
        "empty": "",
        "long-line-1MB": "x = '" + "a" * (1 << 20) + "'; y = t[m]\n",
        "many-findings-5k": "import torch\ndef f(t):\n" + "    for i in r:\n        v = t.sum().item()\n" * 5000,
    }
    built: dict[str, tuple[Builder, bool]] = {name: (_source(text), False) for name, text in sources.items()}
    built["many-findings-200k"] = (_source("import torch\ndef f(t):\n"
                                           + "    for i in r:\n        v = t.sum().item()\n" * 200_000), True)
    built["deep-sum-200k"] = (_source("x = 1" + " + 1" * 200_000 + "\n"), True)
    return built




def _link_chain(depth: int) -> Builder:
    """pkg/l0 → l1 → … → a folder holding the finding: a chain of ``depth`` links, none a loop."""
    def build(folder: Path) -> None:
        (folder / "pkg" / "real").mkdir(parents=True)
        (folder / "pkg" / "real" / "a.py").write_text(FINDING)
        for level in range(depth):
            target = "real" if level == depth - 1 else f"l{level + 1}"
            os.symlink(target, folder / "pkg" / f"l{level}")
    return build


def _trees() -> dict[str, tuple[Builder, tuple[str, ...], dict]]:
    """Folders to walk, with how many findings the walk must report (each real file once)."""
    pkg = files({"pkg/a.py": FINDING})
    once = {"findings": 1, "exits": frozenset({1})}
    return {
        "loop-to-parent": (chain(pkg, symlink("pkg/sub/up", "..")), ("pkg",), once),
        "loop-to-self": (chain(pkg, symlink("pkg/self", ".")), ("pkg",), once),
        "loop-to-root-of-walk": (chain(pkg, symlink("pkg/a/b/c", "../../..")), ("pkg",), once),
        "two-links-one-folder": (chain(pkg, symlink("pkg/x", "."), symlink("pkg/y", ".")), ("pkg",), once),
        "link-chain-40": (_link_chain(40), ("pkg",), {"exits": frozenset({0, 1})}),
        "same-file-twice": (pkg, ("pkg", "pkg/a.py"), once),
        "fifo-py": (chain(pkg, fifo("pkg/f.py")), ("pkg",), {"exits": frozenset({1, 2})}),
        "dev-zero-py": (chain(pkg, symlink("pkg/z.py", "/dev/zero")), ("pkg",), {"exits": frozenset({1, 2})}),
        "dangling-py": (chain(pkg, symlink("pkg/d.py", "missing.py")), ("pkg",), {"exits": frozenset({1, 2})}),
        "folder-named-py": (chain(pkg, files({"pkg/d.py/inner.py": FINDING})), ("pkg",), {"exits": frozenset({1})}),
        "escape-file-name": (files({"pkg/e\x1b[2J\x07.py": FINDING}), ("pkg",), once),
        "newline-file-name": (files({"pkg/n\n::error file=evil.py::x.py": FINDING}), ("pkg",), once),
        "many-files-2000": (files({f"pkg/m{i}.py": "x = 1\n" for i in range(2000)}), ("pkg",),
                            {"findings": 0, "exits": frozenset({0})}),
    }
