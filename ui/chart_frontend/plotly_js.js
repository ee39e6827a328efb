// Loading plotly.js for the chart element (ui/charts.py: the element's module is this file, the fit,
// the crowding and chart.js, in one).
//
// plotly.js is loaded once per tab, as a classic <script> in the document's head (it sets
// window.Plotly, which the transport script, polarize/web/transport.js, uses too), from its address
// ("plotly": the app's own copy, ui/plotly_js.py: plotly.js's cartesian bundle). The app's server sends
// it gzipped once, and the browser keeps it: a later visit loads it from the cache, and V8 keeps its
// compiled code for that address (measured in Chromium for the full bundle, 4.8 MB: 50-120 ms a later
// load, against 1.1-1.7 s compiled anew; the cartesian bundle, 1.5 MB, costs about 0.5 s less anew).

const PROMISE = "__polarizePlotly";

function plotly(head) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window[PROMISE]) {
    const address = new URL(head.plotly, document.baseURI).href;
    window[PROMISE] = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = address;
      script.dataset.polarize = "plotly";
      script.addEventListener("load", () => resolve(window.Plotly));
      script.addEventListener("error", () => {
        window[PROMISE] = null;  // a later figure tries again
        script.remove();
        reject(new Error(`plotly.js could not be loaded from ${address}`));
      });
      document.head.appendChild(script);
    });
  }
  return window[PROMISE];
}
