// The chart element's crowding (ui/charts.py: one module with chart.js and the fit).
// polarize.plots.crowding's choices that depend on the plot's height, made again for the height the
// figure is fitted to here (the server made them for the height it fitted for, a guess at this one):
// a y axis's tick labels thinned to what its panel holds (_thin), a y title too long for its panel
// shortened or dropped (_fit_y_titles), the notes of a panel too short for them hidden, its traces'
// inner legends off and its notes drawn as text traces hidden (and shown again when it grows).
// From what these were as built, which the server describes in layout.meta.bands.crowd (uncrowded's
// answer: what it changed, as it was, and the rules' constants).

const TICK_KEYS = ["tickvals", "ticktext", "tick0", "dtick", "tickmode", "nticks"];
const TAG = /<[^>]*>/g;

const isNumber = (value) => typeof value === "number";
const unset = (value) => (value === undefined ? null : value);
const sameValue = (a, b) => JSON.stringify(unset(a)) === JSON.stringify(unset(b));

// crowding._span: a domain's share of the plot.
function span(domain) {
  return Array.isArray(domain) && domain.length === 2 ? domain[1] - domain[0] : 1;
}

// crowding._ref_axis: the axis a note is placed on ("y3" for "y3" or "y3 domain"); null for paper.
function refAxis(ref) {
  return typeof ref === "string" && ref.startsWith("y") ? ref.split(" ")[0] : null;
}

function titleOf(axis) {
  const title = axis && axis.title;
  return title && typeof title === "object" ? unset(title.text) : unset(title);
}

// style.shown_length: characters of plotly text shown (tags take no room).
function shownLength(text) {
  return [...text.replace(TAG, "")].length;
}

// crowding._tick_size: a log axis's powers of ten are drawn larger than their font.
function tickSize(axis, size, crowd) {
  const font = Number((axis.tickfont && axis.tickfont.size) || size);
  const power = axis.type === "log" && axis.exponentformat === "power" && !axis.tickformat;
  return power ? font * crowd.log : font;
}

// crowding._plotly_step: the step plotly.js takes for a linear axis (rough = span / nticks).
function plotlyStep(rough) {
  const base = 10 ** Math.floor(Math.log10(rough));
  return base * [2, 5, 10].find((m) => m > rough / base);
}

// crowding._nice_steps: 1, 2, 2.5 and 5 times a power of ten, from a hundredth of ``whole`` to it.
function niceSteps(whole) {
  const top = Math.floor(Math.log10(whole));
  const steps = [];
  for (let k = top - 2; k <= top; k++) {
    for (const m of [1, 2, 2.5, 5]) if (m * 10 ** k <= whole) steps.push(m * 10 ** k);
  }
  return steps;
}

// crowding._multiples: how many multiples of ``step`` lie in [low, high].
function multiples(low, high, step) {
  return Math.floor(high / step + 1e-9) - Math.ceil(low / step - 1e-9) + 1;
}

// crowding._thin: tick labels of a vertical axis ``tall`` px long at least ``pitch`` px apart, on
// ``axis`` (its tick settings as built, null for unset, with its range, type and formats).
function thin(axis, tall, pitch, crowd) {
  const values = axis.tickvals;
  const most = Math.max(2, Math.trunc(tall / pitch) + 1);
  if (Array.isArray(values) && values.length > most) {
    const every = Math.ceil((values.length - 1) / (most - 1));
    axis.tickvals = values.filter((_, i) => i % every === 0);
    if (Array.isArray(axis.ticktext)) axis.ticktext = axis.ticktext.filter((_, i) => i % every === 0);
    return;
  }
  if (values !== null && values !== undefined) return;
  const ends = axis.range;
  const [low, high] = Array.isArray(ends) && ends.length === 2
    ? ends.map(Number).sort((a, b) => a - b) : [null, null];
  const step = axis.dtick;
  if (low !== null && high > low) {
    const unit = tall / (high - low);  // px per unit of the range (a decade on a log axis)
    if (axis.type === "log" && high - low >= 1) {
      const decades = Math.max(isNumber(step) ? Math.trunc(step) : 1, Math.ceil(pitch / unit));
      const first = Math.ceil(low + 0.35 * pitch / unit);
      Object.assign(axis, {tick0: first <= high ? first : Math.ceil(low), dtick: decades, tickmode: "linear"});
      return;
    }
    if (isNumber(step) && step > 0 && step * unit < pitch) {
      axis.dtick = step * Math.ceil(pitch / (step * unit));
      return;
    }
    const type = axis.type === undefined ? "linear" : axis.type;
    if (unset(step) === null && (type === "linear" || type === "-")) {
      const nticks = Math.min(axis.nticks || most, most);
      if (multiples(low, high, plotlyStep((high - low) / nticks)) >= 2) {
        axis.nticks = nticks;
        return;
      }
      const spread = niceSteps(high - low).filter((s) => multiples(low, high, s) >= 2);
      if (spread.length && Math.max(...spread) * unit >= crowd.label * pitch / crowd.pitch) {
        Object.assign(axis, {tickmode: "linear", tick0: 0, dtick: Math.max(...spread)});
        return;
      }
    }
  }
  if (!isNumber(step) && typeof step !== "string") axis.nticks = Math.min(axis.nticks || most, most);
}

// crowding._fit_y_titles: a y title longer than its panel is tall loses its words in brackets, or goes.
function fitTitle(text, tall, font, crowd) {
  const most = tall / (font * crowd.char * 1.2);
  if (shownLength(text) <= most) return text;
  const short = text.replace(/\s*\([^)]*\)\s*$/, "").trim();
  return short && shownLength(short) <= most ? short : "";
}

// The figure as built, before the server's crowding, kept on its description (crowd.built), once per
// figure, before it is drawn: each y axis's tick settings and title, whether each note and each trace
// that crowding may hide was shown. The notes the server dropped are put back in their places, hidden.
function asBuilt(layout, data) {
  const crowd = layout.meta.bands.crowd;
  if (crowd.built) return;
  const notes = (layout.annotations || []).slice();
  const shown = notes.map((note) => unset(note.visible));
  for (const [index, note] of crowd.notes) {
    notes.splice(index, 0, {...note, visible: false});
    shown.splice(index, 0, unset(note.visible));
  }
  layout.annotations = notes;
  const axes = {};
  for (const [key, axis] of Object.entries(layout)) {
    if (!/^yaxis\d*$/.test(key) || !axis || typeof axis !== "object") continue;
    const changed = crowd.ticks[key] || {};
    const ticks = {};
    for (const name of TICK_KEYS) ticks[name] = name in changed ? changed[name] : unset(axis[name]);
    axes[key] = {ticks, title: key in crowd.titles ? crowd.titles[key] : titleOf(axis)};
  }
  const traces = {};
  data.forEach((trace, i) => {
    const legend = unset(trace.legend) !== null && trace.legend !== "legend";
    const note = trace.mode === "text" && !(trace.meta && trace.meta.key);
    if (legend || note) {
      traces[i] = crowd.traces[i] || [unset(trace.showlegend), unset(trace.visible)];
    }
  });
  crowd.built = {axes, notes: shown, traces};
}

// What crowding changes at a plot ``plot`` px tall (its y axes' domains: ``domainOf``): a relayout's
// update (attribute path -> value, null for unset) and the traces' (a restyle's, or null).
function crowded(layout, data, plot, domainOf) {
  const update = {};
  const crowd = layout.meta.bands.crowd;
  if (!crowd || !crowd.built) return {update, traces: null};
  const size = Number((layout.font && layout.font.size) || 12);
  const short = {};
  for (const [key, built] of Object.entries(crowd.built.axes)) {
    const axis = layout[key];
    const tall = span(domainOf(key)) * plot;
    short[`y${key.slice(5)}`] = tall < crowd.room;
    const ticks = {...built.ticks};
    if (unset(axis.showticklabels) !== false && unset(axis.visible) !== false) {
      const working = {...ticks, range: axis.range, type: axis.type, exponentformat: axis.exponentformat,
                       tickformat: axis.tickformat, tickfont: axis.tickfont};
      thin(working, tall, tickSize(working, size, crowd) * crowd.pitch, crowd);
      for (const name of TICK_KEYS) ticks[name] = unset(working[name]);
    }
    for (const name of TICK_KEYS) if (!sameValue(ticks[name], axis[name])) update[`${key}.${name}`] = ticks[name];
    if (built.title) {
      const font = Number((axis.title && axis.title.font && axis.title.font.size) || size);
      const text = fitTitle(built.title, tall, font, crowd);
      if (text !== titleOf(axis)) update[`${key}.title.text`] = text;
    }
  }
  (layout.annotations || []).forEach((note, i) => {
    const ref = refAxis(note.yref);
    const want = ref !== null && short[ref] ? false : crowd.built.notes[i];
    if (!sameValue(note.visible, want)) update[`annotations[${i}].visible`] = want;
  });
  const traces = {indices: [], showlegend: [], visible: []};
  for (const [index, [legend, visible]] of Object.entries(crowd.built.traces)) {
    const trace = (data || [])[Number(index)];
    if (!trace) continue;  // not the traces it was described with
    const low = Boolean(short[trace.yaxis || "y"]);
    const wantLegend = low && (trace.legend || "legend") !== "legend" ? false : legend;
    const wantVisible = low && trace.mode === "text" && !(trace.meta && trace.meta.key) ? false : visible;
    if (!sameValue(trace.showlegend, wantLegend) || !sameValue(trace.visible, wantVisible)) {
      traces.indices.push(Number(index));
      traces.showlegend.push(wantLegend);
      traces.visible.push(wantVisible);
    }
  }
  return {update, traces: traces.indices.length ? traces : null};
}
