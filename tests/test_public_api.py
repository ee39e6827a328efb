"""The public surface: ``polarize.__all__`` is the supported API, pinned so that a change is deliberate."""

from __future__ import annotations

import subprocess
import sys

import polarize

PUBLIC = {
    # describe a run
    "Experiment", "ConfigError", "limits", "PRESETS", "Preset", "get_preset",
    # the registries: normalizers and losses by name, the loss objects, the gradients
    "NORMALIZERS", "make_normalizer", "DegenerateStateError", "LOSSES", "Logistic", "LogisticData", "Square",
    "KL", "entropy", "conditioned_matrix", "value_gradients", "tied_gradients",
    # run it, read it
    "simulate", "simulate_many", "Result", "Ensemble", "Status", "judge", "Verdict", "polarization_rate",
    "Rate",
    "basins", "Basins", "naive_odds", "NaiveOdds",
    # draw it (besides Result.figure and Ensemble.figure)
    "dashboard", "basin_figure", "odds_figure",
}


def test_all_names_exactly_the_supported_api():
    assert set(polarize.__all__) == PUBLIC
    assert len(polarize.__all__) == len(PUBLIC)  # no name twice


def test_dir_lists_the_api_and_no_internal_module():
    # Importing a submodule binds it on the package; dir() still lists only the API.
    import polarize.serialize
    import polarize.systems

    assert set(dir(polarize)) == PUBLIC | {"__version__"}


def test_every_public_name_resolves_and_is_documented():
    for name in polarize.__all__:
        value = getattr(polarize, name)
        if callable(value):
            assert (value.__doc__ or "").strip(), f"{name} has no docstring"


def test_unknown_names_still_raise_attribute_error():
    try:
        polarize.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("polarize.no_such_thing resolved")


def test_internal_modules_stay_importable_by_full_path():
    from polarize import cli, serialize  # noqa: F401
    from polarize.plots import dashboard  # noqa: F401
    from polarize.serve import runner  # noqa: F401
    from polarize.web import deck_store  # noqa: F401


def test_import_polarize_loads_neither_plotly_nor_pandas():
    code = ("import sys, polarize; polarize.simulate(polarize.Experiment(n=2, d=2, horizon=1.0, samples=3)); "
            "print(sorted(m for m in ('plotly', 'pandas', 'streamlit', 'polarize.plots', 'polarize.science') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
