"""The Explorer: one animated dashboard of a run, every setting in the sidebar and in the URL."""

import streamlit as st

import ui
from polarize import ConfigError, export
from polarize import explorer as ex
from polarize.plots import PANELS

ui.through_app()

C = ex.CONTROLS
state = st.session_state
ignored = ui.init_controls()


def option_names(key):
    return lambda option: ex.option_name(key, option)


# ---- sidebar: the controls ---------------------------------------------------------------------
with st.sidebar:
    st.selectbox(C["preset"].label, C["preset"].options, key="preset", on_change=ui.apply_preset,
                 help=C["preset"].help)
    st.caption(ui.preset_description(state["preset"]))
    st.slider(C["n"].label, int(C["n"].low), int(C["n"].high), key="n", help=C["n"].help)
    tied = ex.is_tied(state["preset"])
    if tied:
        state["d"] = state["n"]
    st.slider(C["d"].label, int(C["d"].low), int(C["d"].high), key="d", disabled=tied,
              help=C["d"].help + (" The tied model needs d = n." if tied else ""))
    for key in ("loss", "normalizer"):
        st.selectbox(C[key].label, C[key].options, key=key, format_func=option_names(key), help=C[key].help)
    softmax = state["normalizer"] == "softmax"
    if not softmax:
        state["temperature"] = 1.0
    st.number_input(C["temperature"].label, C["temperature"].low, C["temperature"].high, step=0.1,
                    key="temperature", disabled=not softmax, format="%g",
                    help=C["temperature"].help + ("" if softmax else " (softmax only)"))
    st.radio(C["method"].label, C["method"].options, key="method", format_func=option_names("method"),
             horizontal=True, help=C["method"].help)
    st.number_input(C["lr"].label, C["lr"].low, C["lr"].high, step=0.01, key="lr", format="%g",
                    disabled=state["method"] == "flow", help=C["lr"].help)
    st.select_slider(C["horizon"].label, C["horizon"].options, key="horizon",
                     format_func=option_names("horizon"), help=C["horizon"].help)
    st.number_input(C["seed"].label, int(C["seed"].low), int(C["seed"].high), step=1, key="seed",
                    help=C["seed"].help)
    st.subheader("Initialization")
    st.selectbox(C["a_init"].label, C["a_init"].options, key="a_init", format_func=option_names("a_init"),
                 help=C["a_init"].help)
    left, right = st.columns(2)
    left.number_input(C["a_scale"].label, C["a_scale"].low, C["a_scale"].high, step=0.05, key="a_scale",
                      format="%g", disabled=state["a_init"] == "zeros", help=C["a_scale"].help)
    right.number_input(C["a_shift"].label, C["a_shift"].low, C["a_shift"].high, step=0.1, key="a_shift",
                       format="%g", disabled=state["a_init"] not in ("shifted", "vertex"),
                       help=C["a_shift"].help)
    left, right = st.columns(2)
    left.selectbox(C["V_init"].label, C["V_init"].options, key="V_init", format_func=option_names("V_init"),
                   help=C["V_init"].help)
    right.number_input(C["V_scale"].label, C["V_scale"].low, C["V_scale"].high, step=0.05, key="V_scale",
                       format="%g", disabled=state["V_init"] == "zeros", help=C["V_scale"].help)
    values = ui.current_values()
    note = ex.init_note(state["preset"], values)
    if note:
        st.caption(note)

ui.save_and_share(state["preset"], values)

# ---- main area ---------------------------------------------------------------------------------
st.title("Explorer: watch softmax polarize")
changes = ex.describe_changes(state["preset"], values)
st.caption(f"Preset **{state['preset']}**" + (f" ({changes})" if changes else "")
           + ". Every setting is in the page's address: copy it to share this exact run.")

if ignored:
    lines = "\n".join(f"- `{key}`: {reason}" for key, reason in ignored.items())
    st.warning("This link had values the Explorer could not use; it used the preset's values instead:"
               f"\n\n{lines}", icon=":material/link_off:")

try:
    experiment = ex.build_experiment(state["preset"], values)
except ConfigError as exc:
    st.error(f"These settings do not make a valid run: {exc}", icon=":material/error:")
    st.stop()

with st.spinner("Simulating the flow...", show_time=True):
    view = ui.explore(experiment)

if view.error:
    st.error(view.error, icon=":material/error:")
    st.stop()
if view.warning:
    st.warning(view.warning, icon=":material/warning:")

verdict = view.verdict
figure_column, numbers = st.columns([5, 1.15], gap="medium")
with figure_column:
    st.plotly_chart(view.figure, key="dashboard", theme=None,
                    config={"displaylogo": False, "modeBarButtonsToRemove": ["select2d", "lasso2d"]})
with numbers:
    st.metric("Polarized?", ex.VERDICT_WORDS[verdict.status],
              help="Yes when the leading token holds at least 95% of the scores.")
    st.markdown(verdict.sentence)
    for label, text, help_text in ex.summary_metrics(view.result):
        st.metric(label, text, help=help_text)

captions = ex.panel_captions(experiment)
columns = st.columns([0.34, 0.33, 0.33])
with columns[0]:
    st.caption(f"**{PANELS['simplex']}.** {captions['simplex']}")
with columns[1]:
    st.caption(f"**{PANELS['scores'].replace('<sub>i</sub>', '_i')}.** {captions['scores']}")
    st.caption(f"**{PANELS['repulsion']}.** {captions['repulsion']}")
with columns[2]:
    st.caption(f"**{PANELS['entropy']}.** {captions['entropy']}")
    st.caption(f"**{PANELS['loss']}.** {captions['loss']}")

st.subheader("Downloads")
result, stem = view.result, export.file_stem(experiment)
buttons = st.columns(4)
buttons[0].download_button("Trajectory (CSV)", lambda: export.trajectory_csv(result), f"{stem}.csv",
                           mime="text/csv", on_click="ignore", icon=":material/table:", key="download_csv")
buttons[1].download_button("Trajectory (JSON)", lambda: export.trajectory_json(result), f"{stem}.json",
                           mime="application/json", on_click="ignore", icon=":material/data_object:",
                           key="download_json")
buttons[2].download_button("Configuration (JSON)", lambda: export.config_json(result), f"{stem}-config.json",
                           mime="application/json", on_click="ignore", icon=":material/settings:",
                           key="download_config",
                           help="Run it again with: polarize run CONFIG.json -o RESULT.json")
buttons[3].download_button("Dashboard (HTML)", lambda: export.dashboard_html(view.figure, title=stem),
                           f"{stem}.html", mime="text/html", on_click="ignore", icon=":material/movie:",
                           key="download_html", help="The animated dashboard as one file that plays offline.")
