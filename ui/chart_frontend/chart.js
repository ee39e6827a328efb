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
// A chart's next figure may be held here before the press that shows it (held, below): drawn at the click.
//
// A chart keeps aside the last figures it drew (kept, below), their drawn <div>s out of the document: a
// figure it drew before (a setting seen before: back to the last seed) is put back, not drawn again.
//
// The element's module is this file after the others of chart_frontend/ (ui/charts.py MODULE): loading
// plotly.js (plotly_js.js), the fit (fit.js) and the crowding (crowding.js), and the transport script
// (polarize/web/transport.js) at its head, which an element keyed "transport" installs.

const NEWLINE = 10;
const decoder = new TextDecoder();

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

// A click: on a button a figure is held for (found by its key, as the controls' element marks it:
// data-button="<key>"), that figure drawn.
function pressed(event) {
  const button = event.target instanceof Element ? event.target.closest("button") : null;
  if (!button) return;
  for (const [key, entry] of registry(HELD)) {
    if (button.dataset.button !== entry.button) continue;
    registry(HELD).delete(key);  // drawn once: the next press waits for the next figure held
    const chart = registry(CHARTS).get(key);
    if (!chart || chart.wanted !== entry.after) continue;  // held for what the chart no longer shows
    const {head, body} = read(entry.bytes);
    if (body !== null && head.revision !== chart.wanted) show(chart, head, body);
  }
}

// What the first ancestor of ``element`` that scrolls (the page's main column) scrolls: its content.
function scrolledContent(element) {
  for (let node = element.parentElement; node; node = node.parentElement) {
    const overflow = getComputedStyle(node).overflowY;
    if (overflow === "auto" || overflow === "scroll") return node.firstElementChild;
  }
  return null;
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
  // What is above the figure may change its height while the figure's box keeps its own (a figure
  // above drawn after this one, a comparison's panel coming in): the content of the column that
  // scrolls, which holds both, is watched too.
  const column = scrolledContent(parentElement);
  if (column) chart.observer.observe(column);
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
