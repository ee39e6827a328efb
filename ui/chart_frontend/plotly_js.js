// Loading plotly.js for the chart element (ui/charts.py: the element's module is this file, the fit,
// the crowding and chart.js, in one).
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

const PROMISE = "__polarizePlotly";

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
