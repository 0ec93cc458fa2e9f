"""Scoring an analysis against a truth at the exact line: today's JSON and the fields it is gaining."""

from __future__ import annotations

from line_scores import score, side_by_side

TRUTH = {"target": "t", "file": "app/serve.py", "syncs": [
    {"site": "lib/generate.py:396", "via": "app/serve.py:31", "kind": "truthiness", "cpu_path": 2, "cuda_path": 2},
    {"site": "lib/generate.py:2421", "via": "app/serve.py:31", "kind": "truthiness", "cpu_path": 1, "cuda_path": 0},
]}


def _sync(file: str, line: int, source: str = "runtime", **extra: object) -> dict:
    return {"call_site": {"file": file, "line": line, "function": "f", "line_source": source}, **extra}


def test_a_sync_reported_twice_halves_precision() -> None:
    # today: each library sync once at the user's def line (trace) and once at the library line (guard)
    syncs = [_sync("app/serve.py", 20, "def") for _ in range(3)]
    syncs += [_sync("lib/generate.py", 396), _sync("lib/generate.py", 396), _sync("lib/generate.py", 2421)]
    result = score({"summary": {"syncs": 6}, "syncs": syncs}, TRUTH)
    assert (result.site.precision, result.site.recall) == (0.5, 1.0)
    assert result.headline == 6 and result.truth_total == 3 and result.exact_share == 0.5
    assert result.extra == (("app/serve.py:20", 3),)


def test_via_is_read_when_present_and_count_stands_for_several() -> None:
    syncs = [_sync("lib/generate.py", 396, count=2, via={"file": "app/serve.py", "line": 31}),
             _sync("/venv/lib/python3.11/site-packages/lib/generate.py", 2421, via="app/serve.py:31")]
    result = score({"summary": {"syncs": 3}, "syncs": syncs}, TRUTH)
    assert result.site.precision == result.site.recall == 1.0
    assert result.via.precision == result.via.recall == 1.0


def test_a_folded_line_is_a_miss_and_an_extra() -> None:
    syncs = [_sync("lib/generate.py", 396), _sync("lib/generate.py", 396), _sync("lib/generate.py", 396)]
    result = score({"summary": {"syncs": 3}, "syncs": syncs}, TRUTH)
    assert result.missed == (("lib/generate.py:2421", "truthiness", 1),)
    assert result.extra == (("lib/generate.py:396", 1),)


def test_the_cuda_path_counts_per_recorded_step() -> None:
    syncs = [_sync("lib/generate.py", 396) for _ in range(4)]
    result = score({"summary": {"syncs": 4}, "syncs": syncs}, TRUTH, path="cuda_path", steps=2)
    assert result.truth_total == 4 and result.site.precision == result.site.recall == 1.0


def test_two_modes_side_by_side_against_one_truth() -> None:
    latent = score({"summary": {"syncs": 3}, "syncs": [_sync("lib/generate.py", 2421) for _ in range(3)]}, TRUTH,
                   path="cuda_path")
    shadow = score({"summary": {"syncs": 2}, "syncs": [_sync("lib/generate.py", 396) for _ in range(2)]}, TRUTH,
                   path="cuda_path")
    rows = side_by_side({"latent": [latent], "shadow-cuda": [shadow]}).splitlines()
    assert rows[0] == ("| target | truth | latent headline | latent P | latent R | shadow-cuda headline | "
                       "shadow-cuda P | shadow-cuda R |")
    assert rows[2] == "| t | 2 | 3 | 0.00 | 0.00 | 2 | 1.00 | 1.00 |"
