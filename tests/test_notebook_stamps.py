"""`make notebooks` does not churn: a notebook whose cells, course_lib and exercises did not change
is skipped (its stored outputs stay byte for byte), and a changed input re-executes it."""

from __future__ import annotations

import json
from pathlib import Path

from course_lib import notebook_stamps, notebook_tools


def _course(tmp_path: Path) -> Path:
    (tmp_path / "course_lib").mkdir()
    (tmp_path / "course_lib" / "x.py").write_text("X = 1\n")
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises" / "e.py").write_text("def e():\n    raise NotImplementedError\n")
    (tmp_path / "notebooks").mkdir()
    notebook = {"cells": [{"cell_type": "code", "source": "print(1)", "metadata": {}, "outputs": [],
                           "execution_count": None, "id": "a"}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    path = tmp_path / "notebooks" / "01_x.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def _stamp(path: Path, root: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data["metadata"][notebook_stamps.STAMP_KEY] = {"inputs": notebook_stamps.inputs_digest(path, root)}
    path.write_text(json.dumps(data), encoding="utf-8")


def test_the_digest_follows_cells_course_lib_and_exercises_not_outputs(tmp_path):
    path = _course(tmp_path)
    assert not notebook_stamps.is_current(path, tmp_path)
    _stamp(path, tmp_path)
    assert notebook_stamps.is_current(path, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "1\n"}]
    data["cells"][0]["execution_count"] = 7
    path.write_text(json.dumps(data), encoding="utf-8")
    assert notebook_stamps.is_current(path, tmp_path)  # outputs are results, not inputs
    (tmp_path / "exercises" / "e.py").write_text("def e():\n    return 1\n")
    assert not notebook_stamps.is_current(path, tmp_path)
    _stamp(path, tmp_path)
    (tmp_path / "course_lib" / "x.py").write_text("X = 2\n")
    assert not notebook_stamps.is_current(path, tmp_path)
    _stamp(path, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["cells"][0]["source"] = "print(2)"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert not notebook_stamps.is_current(path, tmp_path)


def test_make_notebooks_skips_current_notebooks_and_force_runs_them(tmp_path, monkeypatch, capsys):
    path = _course(tmp_path)
    _stamp(path, tmp_path)
    before = path.read_bytes()
    ran = []
    monkeypatch.setattr(notebook_tools, "NOTEBOOKS_DIR", path.parent)
    monkeypatch.setattr(notebook_stamps, "ROOT", tmp_path)
    monkeypatch.setattr(notebook_stamps.inputs_digest, "__defaults__", (tmp_path,))
    monkeypatch.setattr(notebook_stamps.is_current, "__defaults__", (tmp_path,))
    monkeypatch.setattr(notebook_tools, "execute_notebook", lambda p: ran.append(p.name) or 0.1)
    assert notebook_tools.main([]) == 0
    assert ran == [] and path.read_bytes() == before and "пропущен" in capsys.readouterr().out
    assert notebook_tools.main(["--force"]) == 0 and ran == ["01_x.ipynb"]


def test_make_notebooks_runs_the_bonus_notebooks_and_takes_their_names(tmp_path, monkeypatch):
    path = _course(tmp_path)
    bonus = path.parent / "bonus" / "01_y.ipynb"
    bonus.parent.mkdir()
    bonus.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    ran = []
    monkeypatch.setattr(notebook_tools, "NOTEBOOKS_DIR", path.parent)
    monkeypatch.setattr(notebook_tools, "execute_notebook", lambda p: ran.append(p.relative_to(path.parent).as_posix()) or 0.1)
    for names, expected in (([], ["01_x.ipynb", "bonus/01_y.ipynb"]), (["bonus/01_y"], ["bonus/01_y.ipynb"]),
                            (["01_y"], ["bonus/01_y.ipynb"]), (["notebooks/bonus/01_y.ipynb"], ["bonus/01_y.ipynb"]),
                            (["bonus"], ["bonus/01_y.ipynb"]), (["01_x"], ["01_x.ipynb"])):
        ran.clear()
        assert notebook_tools.main(["--force", *names]) == 0
        assert ran == expected, names
