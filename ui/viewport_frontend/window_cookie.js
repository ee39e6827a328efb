// The window's width, written into the viewport's cookie while the page's head is read (ui/window_cookie.py
// puts this in every page the app's server sends, after the viewport's meta tag): before Streamlit's
// bundle runs, and so before it opens the session whose first run reads the cookie
// (st.context.cookies). ARGS (set above by the server): the cookie's name and the step widths are
// rounded down to, as the viewport element rounds them (ui/viewport_frontend/viewport.js).
//
// A cookie the element wrote in a window this wide is kept (it knows the main column's width and the
// theme measured); another is replaced by the width and the theme it measured (the column's width
// differs in another window). Nothing written, nothing said, when
// cookies cannot be written: the viewport element measures and posts, as before.
(() => {
  try {
    const {cookie, step} = ARGS;
    const width = window.innerWidth;
    if (!width) return;
    const window_ = Math.max(step, Math.floor(width / step) * step);
    const mine = document.cookie.split("; ").find((item) => item.startsWith(`${cookie}=`));
    let kept = null;
    try {
      kept = mine ? JSON.parse(decodeURIComponent(mine.slice(cookie.length + 1))) : null;
    } catch (error) {
      // Not ours to read: replaced.
      kept = null;
    }
    if (kept && typeof kept === "object" && kept.window === window_) return;
    const told = {window: window_};
    if (kept && typeof kept === "object" && typeof kept.dark === "boolean") told.dark = kept.dark;
    document.cookie = `${cookie}=${encodeURIComponent(JSON.stringify(told))}; path=/; max-age=31536000; SameSite=Strict`;
  } catch (error) {
    // No cookie: the viewport element measures the page and posts what the server assumed wrong.
  }
})();
