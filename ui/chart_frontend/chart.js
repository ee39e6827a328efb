// The chart element (ui/charts.py): a Streamlit component v2 that draws a plotly figure in a <div> of
// its own, kept across reruns, and updates it in place with Plotly.react.
//
// Streamlit calls this module's default export when the element mounts and again whenever what it is
// given changes (every rerun brings the same bytes anew, a theme change too); the element's container
// (parentElement) is the same node all along, so the figure's <div> and its state live on it.
//
// What Python sends (bytes): one line of JSON, the head, then the figure's JSON. The head says which
// figure this is ("revision": a digest of the figure and its config), the config, whether a click on a
// point is reported ("clicks") and where plotly.js is ("plotly", served by the app itself). A head
// with "load" only asks for plotly.js: the page mounts one such element before it computes anything,
// so the browser fetches and parses plotly.js while the server runs the page.
//
// plotly.js is loaded once per tab, as a classic <script> in the document's head (it sets
// window.Plotly, which the transport script, polarize/web/transport.js, uses too). A browser that kept the
// plain file ("plotly") in its cache loads it from there: from an address, V8 keeps the script's compiled
// code too (measured in Chromium, 4.8 MB: 50-120 ms a later load, against 1.1-1.7 s compiled anew each
// visit from a blob:). A browser that has not fetches it packed ("packed": gzipped once on the server,
// ui/charts.py PACKED) and unpacks it itself, so that the server never compresses its 4.8 MB on a new
// visitor's first visit; once the tab is idle it fetches the plain file into its cache for its later
// visits (keep). Where it cannot unpack (no DecompressionStream, a fetch or an unpacking that failed),
// it loads the plain file.
//
// A chart's next figure may be held here before the press that shows it (held, below): drawn at the click.
//
// A chart keeps aside the last figures it drew (kept, below), their drawn <div>s out of the document: a
// figure it drew before (a setting seen before: back to the last seed) is put back, not drawn again.
//
// A figure whose layout.meta describes its bands (polarize.plots.present_figure.described) is fitted
// here to the room below its top, before it is drawn and whenever that room changes (fitted, refit),
// and crowded for the plot's height it then has (crowded: polarize.plots.crowding's choices made again).

const PROMISE = "__polarizePlotly";
const NEWLINE = 10;
const decoder = new TextDecoder();

function plotly(head) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window[PROMISE]) {
    const plain = new URL(head.plotly, document.baseURI).href;
    window[PROMISE] = source(plain, head.packed).then((address) => new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = address;
      script.dataset.polarize = "plotly";
      script.addEventListener("load", () => {
        if (address !== plain) {
          URL.revokeObjectURL(address);
          keep(plain);
        }
        resolve(window.Plotly);
      });
      script.addEventListener("error", () => {
        window[PROMISE] = null;  // a later figure tries again
        script.remove();
        reject(new Error(`plotly.js could not be loaded from ${plain}`));
      });
      document.head.appendChild(script);
    }));
  }
  return window[PROMISE];
}

// Where to load plotly.js from: the plain file where this browser kept it in its cache (keep), else
// unpacked here.
async function source(plain, packed) {
  if (kept() === plain) return plain;
  return (await unpacked(packed)) || plain;
}

// The plain file's address this browser fetched into its cache (keep), as its local storage says (a
// cache since emptied: the file is downloaded again, as on any site). Asking the cache itself
// (``only-if-cached``) wrote an error in the console on every miss.
const KEPT_PLOTLY = "polarize-plotly-kept";

function kept() {
  try {
    return window.localStorage.getItem(KEPT_PLOTLY);
  } catch (error) {
    return null;
  }
}

// The plain file fetched into the browser's cache once the tab is idle (its figures drawn), for the
// browser's later visits: the server compresses it then, once per browser, off any visit's way.
function keep(address) {
  const idle = window.requestIdleCallback || ((then) => setTimeout(then, 1000));
  idle(() => fetch(address).then(async (reply) => {
    if (!reply.ok) return;  // an error page is no copy: the next visit unpacks it again
    await reply.arrayBuffer();
    try {
      window.localStorage.setItem(KEPT_PLOTLY, address);
    } catch (error) { /* not kept: the next visit unpacks it again */ }
  }).catch(() => null), {timeout: 10000});
}

// plotly.js fetched packed from ``address`` and unpacked here, as a blob: URL to load it from; null where
// it could not be (the plain file is loaded instead).
async function unpacked(address) {
  if (!address || typeof DecompressionStream === "undefined") return null;
  try {
    const reply = await fetch(new URL(address, document.baseURI).href);
    if (!reply.ok || !reply.body) return null;
    // A server that said it is gzip (Content-Encoding) had the browser unpack it already.
    const packed = !/gzip/i.test(reply.headers.get("Content-Encoding") || "");
    const body = packed ? reply.body.pipeThrough(new DecompressionStream("gzip")) : reply.body;
    const text = await new Response(body).blob();
    return URL.createObjectURL(new Blob([text], {type: "text/javascript"}));
  } catch (error) {
    return null;
  }
}

// The head and the figure's JSON, not parsed (``body``: null when there is none); for an element holding
// a chart's next figure (its head says "next"), the bytes it holds (``held``).
function read(bytes) {
  const end = bytes.indexOf(NEWLINE);
  const head = JSON.parse(decoder.decode(end < 0 ? bytes : bytes.subarray(0, end)));
  if (head.next !== undefined) return {head, body: null, held: bytes.subarray(end + 1)};
  return {head, body: end < 0 ? null : bytes.subarray(end + 1)};
}

// A click on a point, as the page reads it (polarize.web.page.selected_values): its customdata.
function clicked(event) {
  return (event.points || []).map((p) => ({
    customdata: p.customdata === undefined ? null : p.customdata,
    x: p.x === undefined ? null : p.x,
    y: p.y === undefined ? null : p.y,
    curve_number: p.curveNumber,
    point_index: p.pointIndex,
  }));
}

// Stop a playing animation before the figure changes under it: Plotly.react replaces its frames.
function stop(Plotly, gd) {
  if (!gd._transitionData || !gd._transitionData._animationRaf) return Promise.resolve();
  const still = {mode: "immediate", frame: {duration: 0, redraw: false}, transition: {duration: 0}};
  return Plotly.animate(gd, [null], still).catch(() => undefined);
}

// ---- the fit: a figure's height and bands from the room below its top ------------------------------
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

// ---- crowding at the fitted height -----------------------------------------------------------------
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

async function draw(chart, head, body, anyway) {
  const Plotly = await plotly(head);
  if (chart.wanted !== head.revision) return;  // a newer figure came while plotly.js loaded
  if (chart.kept.has(head.revision)) {
    await putBack(Plotly, chart, head.revision);
    return;
  }
  const figure = body instanceof Uint8Array ? JSON.parse(decoder.decode(body)) : body;
  if (chart.draws === 0 && !anyway && madeElsewhere(figure)) {
    const gd = chart.gd;
    gd.dataset.waiting = "window";
    setTimeout(() => {
      if (chart.wanted === head.revision && chart.draws === 0) {
        chart.queue = chart.queue.then(() => draw(chart, head, figure, true)).catch((e) => console.error(e));
      }
    }, ELSEWHERE_MS);
    return;
  }
  delete chart.gd.dataset.waiting;
  await stop(Plotly, chart.gd);
  const height = chart.gd.offsetHeight;
  const gd = placed(chart, spare(chart));
  if (!gd._fullLayout) gd.style.minHeight = `${height}px`;  // a new <div>: the page does not move meanwhile
  fitBefore(chart, figure);
  await Plotly.react(gd, {data: figure.data || [], layout: figure.layout || {},
                          frames: figure.frames || [], config: head.config || {}});
  gd.style.minHeight = "";
  gd.__polarizeTouched = false;  // a new figure, whatever was done to the one drawn over
  chart.width = gd.clientWidth;
  chart.draws += 1;
  gd.dataset.revision = head.revision;
  gd.dataset.draws = String(chart.draws);
  window.__polarizeTransport?.wire?.();  // its step buttons work at once, not at the transport's next look
  if (!gd.__polarizeListening) {
    gd.__polarizeListening = true;
    gd.on("plotly_click", (event) => {
      if (chart.clicks && chart.report) chart.report("click", clicked(event));
    });
    for (const name of TOUCHES) gd.on(name, () => { gd.__polarizeTouched = true; });
    gd.on("plotly_relayout", (update) => {  // a zoom, a pan, a reset; the fit's own relayouts are not
      if (Object.keys(update || {}).some((path) => /range|dragmode/.test(path))) gd.__polarizeTouched = true;
    });
  }
}

// ---- kept: the last figures a chart drew, put back when they come again ----------------------------
// A figure's new draw takes Plotly.react's whole work (for the Normalizers' eight panels, twice the
// Explorer's). The chart keeps aside, out of the document, the <div>s of the last KEPT figures it drew
// that no one touched (played, stepped, zoomed, a legend clicked: TOUCHES), by revision: a figure that
// comes again is put back as it was drawn, fitted again only if its room or width changed meanwhile.
// A new figure is drawn in place of the one shown (kept aside) in the oldest kept <div> (Plotly.react
// over a figure of the same page, as fast as in place), or in a new one while fewer are kept.

const KEPT = 1;
const TOUCHES = ["plotly_animatingframe", "plotly_sliderchange", "plotly_buttonclicked", "plotly_legendclick",
                 "plotly_legenddoubleclick", "plotly_relayouting", "plotly_doubleclick", "plotly_selecting"];

function plotDiv() {
  const gd = document.createElement("div");
  gd.className = "polarize-plot";
  return gd;
}

// The figure shown kept aside, out of the document, if it is drawn and untouched (whether it was); the
// oldest kept past ``most`` dropped.
function keepAside(chart, most) {
  const gd = chart.gd;
  const keep = Boolean(gd._fullLayout && gd.dataset.revision) && !gd.__polarizeTouched;
  if (keep) {
    try {
      window.Plotly.Fx.unhover(gd);  // no hover label left on it for when it comes back
    } catch (error) { /* nothing hovered */ }
    chart.kept.set(gd.dataset.revision, {gd, width: chart.width, room: chart.room});
  }
  while (chart.kept.size > most) {
    const [oldest, entry] = chart.kept.entries().next().value;
    chart.kept.delete(oldest);
    window.Plotly.purge(entry.gd);
  }
  return keep;
}

// The <div> a new figure goes in: the one shown when it is not kept aside (untouched), else the oldest
// kept past KEPT (a figure of the same chart, which Plotly.react draws over as fast as in place), else
// a new one.
function spare(chart) {
  if (!keepAside(chart, KEPT + 1)) return chart.gd;
  if (chart.kept.size <= KEPT) return plotDiv();
  const [oldest, entry] = chart.kept.entries().next().value;
  chart.kept.delete(oldest);
  return entry.gd;
}

// ``gd`` shown in the chart's place (the one there taken out of the document), and the chart's now.
function placed(chart, gd) {
  if (gd !== chart.gd) {
    chart.gd.replaceWith(gd);
    chart.gd = gd;
  }
  return gd;
}

// The kept figure ``revision`` shown again as it was drawn, in place of the one shown (kept aside, or
// dropped when touched); fitted again if its room or its width changed meanwhile (``chart.look``). One
// more figure shown (``draws``), none drawn.
async function putBack(Plotly, chart, revision) {
  await stop(Plotly, chart.gd);
  const entry = chart.kept.get(revision);
  chart.kept.delete(revision);
  const shown = chart.gd;
  if (!keepAside(chart, KEPT)) Plotly.purge(shown);
  placed(chart, entry.gd);
  chart.width = entry.width;
  chart.room = entry.room;
  chart.draws += 1;
  chart.gd.dataset.draws = String(chart.draws);
  chart.look();
}

// One draw at a time, in the order the figures came.
function show(chart, head, body) {
  chart.wanted = head.revision;
  chart.queue = chart.queue.then(() => draw(chart, head, body)).catch((error) => {
    console.error(error);
    // Said where the figure would be, in one line (plotly.js did not load: see the server's log).
    if (!window.Plotly) chart.gd.textContent = "This figure could not be drawn: plotly.js did not load.";
  });
}

// ---- held: a chart's next figure, drawn at the press that shows it (ui/charts.py hold) --------------
// An element keyed "<chart's key>_next" is given, under a head of its own (the chart's key, "next"; the
// revision the chart shows now, "after"; the key of the button whose press shows it, "button"), the
// very bytes the chart will be given by the run that press starts. It draws nothing and keeps them
// (HELD, by the chart's key) until the button is clicked: then, if the chart still shows "after", the
// chart draws them at once. The press's run gives the chart the same revision, so it draws nothing
// more; a figure it sends otherwise (the page changed meanwhile) is drawn as any.

const CHARTS = "__polarizeCharts";  // a chart's key -> the chart (chartOf), for its held figure to reach it
const HELD = "__polarizeHeld";  // a chart's key -> {after, button, bytes}

function registry(name) {
  if (!window[name]) window[name] = new Map();
  return window[name];
}

// Keep ``bytes`` for the chart keyed head.next; what undoes it when the element goes.
function hold(head, bytes) {
  const entry = {after: head.after, button: head.button, bytes};
  registry(HELD).set(head.next, entry);
  if (!window.__polarizePress) {  // one listener a tab, in the capture phase: before the button's own
    window.__polarizePress = true;
    document.addEventListener("click", pressed, true);
  }
  return () => {
    if (registry(HELD).get(head.next) === entry) registry(HELD).delete(head.next);
  };
}

// A click: on a button a figure is held for (found by its key's class, st-key-<key>), that figure drawn.
function pressed(event) {
  const button = event.target instanceof Element ? event.target.closest("button") : null;
  if (!button) return;
  for (const [key, entry] of registry(HELD)) {
    if (!button.closest(`.st-key-${entry.button}`)) continue;
    registry(HELD).delete(key);  // drawn once: the next press waits for the next figure held
    const chart = registry(CHARTS).get(key);
    if (!chart || chart.wanted !== entry.after) continue;  // held for what the chart no longer shows
    const {head, body} = read(entry.bytes);
    if (body !== null && head.revision !== chart.wanted) show(chart, head, body);
  }
}

// The figure's <div> and what it shows, kept on the element's container across calls.
function chartOf(parentElement) {
  if (parentElement.__polarizeChart) return parentElement.__polarizeChart;
  const box = document.createElement("div");
  box.className = "polarize-chart";
  const gd = plotDiv();
  box.appendChild(gd);
  parentElement.appendChild(box);
  const chart = {gd, wanted: null, draws: 0, width: 0, room: null, kept: new Map(), clicks: false,
                 report: null, queue: Promise.resolve(), observer: null, look: null};
  // The column's width changes without the window's (the sidebar opened or closed): the figure takes
  // it. The window's height, or what is above the figure, changes its room: the figure is fitted
  // again (refit). Once a frame at most.
  let pending = false;
  chart.look = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      const gd = chart.gd;
      if (window.Plotly && gd._fullLayout && gd.clientWidth && gd.clientWidth !== chart.width) {
        chart.width = gd.clientWidth;
        window.Plotly.Plots.resize(gd);
      }
      refit(chart);
    });
  };
  chart.observer = new ResizeObserver(chart.look);
  chart.observer.observe(box);
  window.addEventListener("resize", chart.look);
  parentElement.__polarizeChart = chart;
  return chart;
}

export default function (component) {
  const {parentElement, data, setTriggerValue} = component;
  if (!(data instanceof Uint8Array) || !data.length) return undefined;
  const {head, body, held} = read(data);
  if (head.load) {
    plotly(head).catch((error) => console.error(error));
    return undefined;
  }
  if (head.transport) return installTransport(head.transport);  // the module's head: polarize/web/transport.js
  if (held) return hold(head, held);
  const chart = chartOf(parentElement);
  chart.clicks = Boolean(head.clicks);
  chart.report = setTriggerValue;
  if (head.key !== undefined) registry(CHARTS).set(head.key, chart);
  if (body === null || head.revision === chart.wanted) chart.look();  // shown already: what is above may have moved
  else show(chart, head, body);
  // Streamlit keeps the last call's answer, and calls it when the element goes.
  return () => {
    if (registry(CHARTS).get(head.key) === chart) registry(CHARTS).delete(head.key);
    chart.observer.disconnect();
    window.removeEventListener("resize", chart.look);
    if (window.Plotly) for (const gd of [chart.gd, ...[...chart.kept.values()].map((e) => e.gd)]) window.Plotly.purge(gd);
    chart.kept.clear();
    delete parentElement.__polarizeChart;
  };
}
