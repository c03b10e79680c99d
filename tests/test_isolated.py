"""kaggle-environments runs from its own folder, behind the test environment's packages."""

import sys
from pathlib import Path

import gymnasium

from tests import isolated
from tests.kaggle import reference


def test_kaggle_environments_comes_from_its_own_folder_behind_the_environment():
    kaggle = reference.kaggle()
    folder = isolated.folder("kaggle-environments", isolated.KAGGLE_ENVIRONMENTS)
    assert Path(kaggle.__file__).is_relative_to(folder)
    assert kaggle.__version__ == isolated.KAGGLE_ENVIRONMENTS
    # Installed without its dependencies: no gymnasium of its own, and the one every test uses
    # is the environment's, found before the folder.
    assert not (folder / "gymnasium").exists()
    assert not Path(gymnasium.__file__).is_relative_to(folder)
    assert sys.path.index(str(folder)) > sys.path.index(str(Path(gymnasium.__file__).parents[1]))


def test_an_install_that_fails_names_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    reason = isolated.add_to_path("vecenv-no-such-package", "0.0.0")
    assert reason is not None and "vecenv-no-such-package==0.0.0" in reason
    assert not isolated.folder("vecenv-no-such-package", "0.0.0").exists()
