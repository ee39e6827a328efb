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
// window.Plotly, which the transport script, polarize/web/transport.js, uses too).

const PROMISE = "__polarizePlotly";
const NEWLINE = 10;
const decoder = new TextDecoder();

function plotly(address) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window[PROMISE]) {
    window[PROMISE] = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = new URL(address, document.baseURI).href;
      script.dataset.polarize = "plotly";
      script.addEventListener("load", () => resolve(window.Plotly));
      script.addEventListener("error", () => {
        window[PROMISE] = null;  // a later figure tries again
        script.remove();
        reject(new Error(`plotly.js could not be loaded from ${script.src}`));
      });
      document.head.appendChild(script);
    });
  }
  return window[PROMISE];
}

// The head and, unless its figure is the one drawn already (``drawn``), the figure.
function read(bytes, drawn) {
  const end = bytes.indexOf(NEWLINE);
  const head = JSON.parse(decoder.decode(end < 0 ? bytes : bytes.subarray(0, end)));
  const same = head.revision !== undefined && head.revision === drawn;
  return {head, figure: end < 0 || same ? null : JSON.parse(decoder.decode(bytes.subarray(end + 1)))};
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

async function draw(chart, head, figure) {
  const Plotly = await plotly(head.plotly);
  if (chart.wanted !== head.revision) return;  // a newer figure came while plotly.js loaded
  const gd = chart.gd;
  await stop(Plotly, gd);
  await Plotly.react(gd, {data: figure.data || [], layout: figure.layout || {},
                          frames: figure.frames || [], config: head.config || {}});
  chart.width = gd.clientWidth;
  chart.draws += 1;
  gd.dataset.revision = head.revision;
  gd.dataset.draws = String(chart.draws);
  if (!chart.listening) {
    chart.listening = true;
    gd.on("plotly_click", (event) => {
      if (chart.clicks && chart.report) chart.report("click", clicked(event));
    });
  }
}

// The figure's <div> and what it shows, kept on the element's container across calls.
function chartOf(parentElement) {
  if (parentElement.__polarizeChart) return parentElement.__polarizeChart;
  const box = document.createElement("div");
  box.className = "polarize-chart";
  const gd = document.createElement("div");
  gd.className = "polarize-plot";
  box.appendChild(gd);
  parentElement.appendChild(box);
  const chart = {gd, wanted: null, draws: 0, width: 0, listening: false, clicks: false, report: null,
                 queue: Promise.resolve(), observer: null};
  // The column's width changes without the window's (the sidebar opened or closed): fit the figure
  // to it, once a frame at most. Its height is the figure's own (layout.height).
  let pending = false;
  chart.observer = new ResizeObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      if (window.Plotly && gd._fullLayout && gd.clientWidth && gd.clientWidth !== chart.width) {
        chart.width = gd.clientWidth;
        window.Plotly.Plots.resize(gd);
      }
    });
  });
  chart.observer.observe(box);
  parentElement.__polarizeChart = chart;
  return chart;
}

export default function (component) {
  const {parentElement, data, setTriggerValue} = component;
  if (!(data instanceof Uint8Array) || !data.length) return undefined;
  const known = parentElement.__polarizeChart;
  const {head, figure} = read(data, known ? known.wanted : null);
  if (head.load) {
    plotly(head.plotly).catch((error) => console.error(error));
    return undefined;
  }
  const chart = chartOf(parentElement);
  chart.clicks = Boolean(head.clicks);
  chart.report = setTriggerValue;
  if (figure !== null) {  // else the figure shown already: nothing to do
    chart.wanted = head.revision;
    // One draw at a time, in the order the figures came.
    chart.queue = chart.queue.then(() => draw(chart, head, figure)).catch((error) => {
      console.error(error);
      // Said where the figure would be, in one line (plotly.js did not load: see the server's log).
      if (!window.Plotly) chart.gd.textContent = "This figure could not be drawn: plotly.js did not load.";
    });
  }
  // Streamlit keeps the last call's answer, and calls it when the element goes.
  return () => {
    chart.observer.disconnect();
    if (window.Plotly) window.Plotly.purge(chart.gd);
    delete parentElement.__polarizeChart;
  };
}
