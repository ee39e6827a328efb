// The chart element's fit (ui/charts.py: one module with the crowding and chart.js): a figure whose
// layout.meta describes its bands (polarize.plots.present_figure.described) is fitted here to the room
// below its top, before it is drawn and whenever that room changes (fitted, refit), and crowded for the
// plot's height it then has (crowding.js: polarize.plots.crowding's choices made again).

// The arithmetic of polarize.plots.present_figure.fitted, from the description the server wrote in
// layout.meta.bands (described): the figure at most as tall as the room the window leaves under its
// top (polarize.web.fit.room), its margins, controls, legends and gaps between rows kept in pixels,
// the rows of panels taking the rest. Applied before the figure is drawn and, as one Plotly.relayout,
// when the window or what is above the figure changes its room.

// Python's round(): halves to even (Math.round takes them up).
function pyRound(x) {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

// Piecewise linear, as numpy.interp: xs increasing, clamped at its ends.
function interp(y, xs, ys) {
  if (y <= xs[0]) return ys[0];
  for (let i = 1; i < xs.length; i++) {
    if (y <= xs[i]) {
      const span = xs[i] - xs[i - 1];
      return span > 0 ? ys[i - 1] + (y - xs[i - 1]) * (ys[i] - ys[i - 1]) / span : ys[i];
    }
  }
  return ys[ys.length - 1];
}

function sameEdges(a, b) {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

// The pixels a figure may take: the window below its top (less the gap under it), or, when that is
// less than half the window or on a phone, the window under the header (it is seen scrolled to).
// Null when the figure is not laid out (a folded block) or says nothing of its room.
function roomOf(gd, bands) {
  const room = bands && bands.room;
  if (!room || gd.getClientRects().length === 0) return null;
  let top = gd.getBoundingClientRect().top;
  for (let node = gd.parentElement; node; node = node.parentElement) top += node.scrollTop || 0;
  const height = window.innerHeight;
  const below = height - top - room.gap;
  return Math.round(room.phone || below < height / 2 ? height - room.header - room.gap : below);
}

// What the fit changes at ``height``, as Plotly.relayout's update (attribute path -> value), from the
// layout as it is now (its annotations placed on the rows bands.placed says); the frames' panel titles
// are moved in place. bands.placed is the rows' new edges once the update is applied. With what
// crowding changes at that height (crowded): in the update, and the traces' (a restyle's, or null).
function fitted(layout, frames, height, data) {
  const bands = layout.meta.bands;
  const update = {};
  let newHeight = Math.trunc(Math.min(height, bands.cap));
  const grow = (h) => Math.min(bands.scale, Math.max(h - bands.least_plot, 0)
                                              / Math.max(bands.margin.t + bands.margin.b, 1));
  const g = grow(newHeight);
  const margin = {};
  for (const side of ["t", "b", "l", "r"]) margin[side] = pyRound(bands.margin[side] * g);
  margin.t = pyRound(margin.t - bands.top_less * g);
  const [over, rows] = bands.legend;
  const needed = pyRound(over * g + rows) + (bands.on_top ? pyRound(bands.on_top * g) : 0);
  const shift = Math.max(needed - margin.t, 0);
  margin.t += shift;
  let plot = Math.max(newHeight - margin.t - margin.b, 1);
  const edges = bands.edges;
  let gap = 0;
  for (let i = 0; i < bands.gaps.length; i++) if (bands.gaps[i]) gap += edges[i + 1] - edges[i];
  const gaps = bands.gaps.filter(Boolean).length;
  const least = pyRound(gap * bands.plot * g * bands.between + (gaps + 1) * bands.least_row);
  const taller = Boolean(bands.least_row) && plot < least;
  if (taller) {
    newHeight += least - plot;
    plot = least;
  }
  for (const [key, index, px, moves] of bands.items) {
    update[index === null ? `${key}.y` : `${key}[${index}].y`] =
      px >= 0 ? 1 + (px * g + (moves ? shift : 0)) / plot : px * g / plot;
  }
  // The rows: gaps ``ratio`` times their built fraction of the plot (their pixels kept), the panels the rest.
  const ratio = bands.plot * g * bands.between / plot;
  let placed = edges.slice();
  if (gaps && gap * ratio <= 0.7) {
    const panels = (1 - gap * ratio) / (1 - gap);
    placed = [0];
    for (let i = 0; i < bands.gaps.length; i++) {
      placed.push(placed[i] + (edges[i + 1] - edges[i]) * (bands.gaps[i] ? ratio : panels));
    }
  }
  if (!sameEdges(placed, bands.placed)) {
    const moved = (y) => interp(interp(y, bands.placed, edges), edges, placed);
    for (const key of Object.keys(layout)) {
      const axis = layout[key];
      if (key.startsWith("yaxis") && axis && Array.isArray(axis.domain)) {
        update[`${key}.domain`] = axis.domain.map(moved);
      }
    }
    const inPlot = (note) => (note.yref === undefined || note.yref === "paper")
      && typeof note.y === "number" && note.y >= 0 && note.y <= 1;
    (layout.annotations || []).forEach((note, i) => {
      if (inPlot(note)) update[`annotations[${i}].y`] = moved(note.y);
    });
    const seen = new Set(layout.annotations || []);
    for (const frame of frames) {
      for (const note of (frame.layout && frame.layout.annotations) || []) {
        if (seen.has(note)) continue;  // each once, however many frames share it
        seen.add(note);
        if (inPlot(note)) note.y = moved(note.y);
      }
    }
  }
  if (bands.title !== null) update["title.y"] = 1 - bands.title * g / newHeight;
  update.height = newHeight;
  for (const side of ["t", "b", "l", "r"]) update[`margin.${side}`] = margin[side];
  const domainOf = (key) => update[`${key}.domain`] || layout[key].domain;
  const crowding = crowded(layout, data, plot, domainOf);
  return {update: {...update, ...crowding.update}, placed, taller, traces: crowding.traces};
}

// Set what ``crowded`` says of the traces on traces not drawn yet (null: unset).
function putTraces(data, traces) {
  if (!traces) return;
  traces.indices.forEach((index, i) => {
    for (const name of ["showlegend", "visible"]) {
      if (traces[name][i] === null) delete data[index][name];
      else data[index][name] = traces[name][i];
    }
  });
}

// Set what ``fitted`` says on a layout not drawn yet (its "a.b" and "a[0].b" paths).
function put(layout, update) {
  for (const [path, value] of Object.entries(update)) {
    const keys = path.replace(/\[(\d+)\]/g, ".$1").split(".");
    let node = layout;
    for (const key of keys.slice(0, -1)) {
      if (node[key] === undefined || node[key] === null) node[key] = {};
      node = node[key];
    }
    if (value === null) delete node[keys[keys.length - 1]];  // as Plotly.relayout unsets it
    else node[keys[keys.length - 1]] = value;
  }
}

// The fit's end: the rows' new edges and whether the figure is taller than its room (the layout
// tests read meta.taller), on the layout itself (not drawn); the room, for a look from outside.
function settle(chart, layout, result, room) {
  layout.meta.bands.placed = result.placed;
  if (result.taller) layout.meta.taller = true;
  else delete layout.meta.taller;
  chart.room = room;
  chart.gd.dataset.room = String(room);
}

// A figure not drawn yet, fitted to the room below its top (no description: as the server fitted it).
function fitBefore(chart, figure) {
  const layout = figure.layout || {};
  const bands = layout.meta && layout.meta.bands;
  if (bands && bands.crowd) asBuilt(layout, figure.data || []);
  const room = roomOf(chart.gd, bands);
  if (room === null) return;
  const result = fitted(layout, figure.frames || [], room, figure.data || []);
  put(layout, result.update);
  putTraces(figure.data || [], result.traces);
  settle(chart, layout, result, room);
}

// The figure drawn, fitted again if its room changed: one Plotly.relayout.
// After the draws queued before it, so that it reads the layout they drew.
function refit(chart) {
  chart.queue = chart.queue.then(() => {
    const gd = chart.gd;
    const layout = gd.layout;
    if (!window.Plotly || !gd._fullLayout || !layout || !layout.meta || !layout.meta.bands) return undefined;
    const room = roomOf(gd, layout.meta.bands);
    if (room === null || room === chart.room) return undefined;
    const frames = (gd._transitionData && gd._transitionData._frames) || [];
    const result = fitted(layout, frames, room, gd.data);
    settle(chart, layout, result, room);
    const traces = result.traces;
    return traces ? window.Plotly.update(gd, {showlegend: traces.showlegend, visible: traces.visible},
                                         result.update, traces.indices)
      : window.Plotly.relayout(gd, result.update);
  }).catch((error) => console.error(error));
}

// Whether a figure was made for a window of another width than this one (polarize.web.fit.room): the
// server assumed a projector's until the page's viewport element posts the window's width, which it
// does now, by the same rule (ui/viewport_frontend/viewport.js). A chart's first figure made elsewhere
// is not drawn: the one made for this window (a phone's stacked panels) comes in its stead, drawn once,
// and nothing pressed on the first one is lost to a redraw. Drawn all the same if none came in
// ELSEWHERE_MS (the element could not post).
const ELSEWHERE_MS = 5000;

function madeElsewhere(figure) {
  const meta = figure.layout && figure.layout.meta;
  const room = meta && meta.bands && meta.bands.room;
  if (!room || typeof room.window !== "number") return false;
  const width = window.innerWidth;
  return (width < room.narrow_below) !== (room.window < room.narrow_below)
    || Math.abs(width - room.window) >= room.step;
}
