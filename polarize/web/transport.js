// Keyboard and step controls for the page's animated plotly figures (polarize/web/transport.py).
//
// The same script runs in two places, both in the page with the figures and its plotly.js: the app's
// chart element (ui/charts.py puts this script at the head of the element's module, and the element
// keyed "transport", drawn by ui/transport.py on pages with an animated figure, installs it) and the
// offline HTML download, where it is inline and installs itself from its settings in a
// JSON <script> element, id transport-config. The figures' play, pause, reset and speed buttons are plain
// plotly buttons; plotly cannot step relative to the current frame, so the two step buttons have
// method "skip" and are handled here, as are the keys. Installed again, it replaces its listeners (kept
// on the page under one name); what it returns removes them.
function installTransport(config) {
  "use strict";
  // KeyboardEvent.code -> action. tests/test_transport.py reads this line: keep it one JSON object.
  const KEYS = {"Space": "toggle", "ArrowLeft": "back", "ArrowRight": "forward", "Home": "reset"};
  // The two step buttons' names (polarize/plots/animation.py STEP_BACK, STEP_FORWARD).
  const BUTTONS = {"step-back": "back", "step-forward": "forward"};
  const host = window;
  const page = document;
  const mine = host.__polarizeTransport || (host.__polarizeTransport = {listeners: {}, last: null});

  // Showing one frame: redrawn when the figure's own slider redraws (heatmaps change only then).
  function still(g) {
    const args = (g._fullLayout.sliders[0].steps[0] || {}).args || [];
    const redraw = Boolean(args[1] && args[1].frame && args[1].frame.redraw);
    return {mode: "immediate", frame: {duration: 0, redraw}, transition: {duration: 0}};
  }

  function animated() {
    return [...page.querySelectorAll(".js-plotly-plot")].filter((g) =>
      g._transitionData && g._transitionData._frames && g._transitionData._frames.length &&
      g._fullLayout && g._fullLayout.sliders && g._fullLayout.sliders.length);
  }

  // The figure the keys act on: the last one pointed at, else the first one in view.
  function target() {
    const all = animated();
    if (all.includes(mine.last)) return mine.last;
    const seen = all.find((g) => { const r = g.getBoundingClientRect(); return r.bottom > 0 && r.top < host.innerHeight; });
    return seen || all[0] || null;
  }

  // Looked up at each use: the page may load its plotly.js after this script has started.
  // An animation cut short by the next one (Pause, a step, Space) rejects its promise with nothing:
  // that is how plotly says "interrupted", not an error.
  function interrupted(reason) { if (reason !== undefined) throw reason; }
  function animate(g, frames, options) { return host.Plotly.animate(g, frames, options).catch(interrupted); }
  function frameNames(g) { return g._fullLayout.sliders[0].steps.map((s) => s.args[0][0]); }
  function current(g) { return g._fullLayout.sliders[0].active || 0; }
  function playing(g) { return Boolean(g._transitionData._animationRaf); }
  function show(g, i) { return animate(g, [frameNames(g)[i]], still(g)); }

  function play(g) {
    // At the speed chosen on the figure (its second menu; a phone's figure has none: Play's own
    // speed); from the start if at the end.
    const speeds = g._fullLayout.updatemenus[1];
    const options = speeds ? speeds.buttons[speeds.active || 0].args[1]
                           : g._fullLayout.updatemenus[0].buttons[0].args[1];
    const start = current(g) >= frameNames(g).length - 1 ? show(g, 0) : Promise.resolve();
    return start.then(() => animate(g, null, options));
  }

  const ACTIONS = {
    toggle: (g) => (playing(g) ? animate(g, [null], still(g)) : play(g)),
    back: (g) => show(g, Math.max(0, current(g) - 1)),
    forward: (g) => show(g, Math.min(frameNames(g).length - 1, current(g) + 1)),
    reset: (g) => show(g, 0),
  };

  function listen(name, where, type, handler) {
    const old = mine.listeners[name];
    if (old) old.where.removeEventListener(old.type, old.handler);
    mine.listeners[name] = {where, type, handler};
    where.addEventListener(type, handler);
  }

  // Keys typed into a control (a text box, a slider, a button) belong to it, not to the figure.
  function typing(element) {
    return element && element.closest &&
      element.closest("input, textarea, select, button, [contenteditable], [role=slider], [role=combobox]");
  }

  listen("keys", page, "keydown", (event) => {
    const action = ACTIONS[KEYS[event.code]];
    if (!action || event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) return;
    const g = target();
    if (!g) return;
    event.preventDefault();  // space would scroll the page, Home jump to its top
    action(g);
  });
  // The figure's own Play and Pause buttons leave plotly's interrupted promises unhandled: the
  // console would show an "Uncaught (in promise)" for every Pause. Only those (no reason) are quiet.
  listen("interrupted", host, "unhandledrejection", (event) => {
    if (event.reason === undefined) event.preventDefault();
  });
  listen("pointer", page, "pointerover", (event) => {
    const g = event.target.closest && event.target.closest(".js-plotly-plot");
    if (g) mine.last = g;
  });

  // The step buttons of every animated figure, wired once per load of this script and per event
  // emitter (plotly makes a new one when a chart is purged and drawn again in the same element).
  const load = {};
  function wire() {
    for (const g of animated()) {
      if (!g._ev || g._ev.__polarizeLoad === load) continue;
      g._ev.__polarizeLoad = load;
      if (g.__polarizeSteps) g.removeListener("plotly_buttonclicked", g.__polarizeSteps);
      g.__polarizeSteps = (event) => {
        const action = ACTIONS[BUTTONS[event.button && event.button.name]];
        if (action) action(g);
      };
      g.on("plotly_buttonclicked", g.__polarizeSteps);
    }
  }

  // "Keep playing after a change": once the (new) figure has settled, play it (unless installed again
  // meanwhile: the new install's autoplay, if any, plays the figure then).
  function autoplay(tries, seen, calm) {
    if (mine.load !== load) return;
    const g = animated()[0];
    const layout = g && g._fullLayout;
    const settled = layout && layout === seen ? calm + 1 : 0;
    if (settled >= 3) { play(g); return; }
    if (tries > 0) setTimeout(() => autoplay(tries - 1, layout, settled), 150);
  }

  mine.load = load;
  wire();
  clearInterval(mine.wiring);  // the last install's
  mine.wiring = setInterval(wire, 1000);
  mine.wire = wire;  // the chart element wires a figure once it has drawn it, not a second later
  if (config.autoplay) autoplay(100, null, 0);
  return () => {
    if (mine.load !== load) return;  // installed again since: the new install's listeners stay
    mine.load = null;
    clearInterval(mine.wiring);
    for (const {where, type, handler} of Object.values(mine.listeners)) where.removeEventListener(type, handler);
    mine.listeners = {};
    mine.wire = null;
  };
}

{
  const settings = document.getElementById("transport-config");
  if (settings) installTransport(JSON.parse(settings.textContent));
}
